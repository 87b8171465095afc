/**
 * Lookups by the registry's indexes (indexes.ts): from the watch cache's indexes when the cache can
 * vouch, else by reading the kind and keeping what the same index function selects, so both paths
 * answer alike (test/store/cache-indexes.test.ts holds them to it).
 */
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject } from '../api/types.js';
import { fieldValues } from '../store/cache/field-index.js';
import { keyOf, present, type RegistryContext } from './context.js';
import { fieldIndexes, timeIndexes, type FieldIndexName, type TimeIndexName } from './indexes.js';
import { storeCall } from './storage-errors.js';

const nameOf = (o: StoredApiObject) => o.metadata.name!;

/** Every object of the kind, read from the store a page at a time (the path without a cache). */
async function filtered(ctx: RegistryContext, keep: (key: string, o: StoredApiObject) => boolean): Promise<KubeObject[]> {
  const found: KubeObject[] = [];
  for await (const o of ctx.store.scan<StoredApiObject>(ctx.prefix, () => true)) if (keep(keyOf(ctx, nameOf(o)), o)) found.push(present(o));
  return found;
}

/** The objects of the kind whose value in the field index `index` is `value`, in name order. */
export function byField(ctx: RegistryContext, index: FieldIndexName, value: string): Promise<KubeObject[]> {
  return storeCall(ctx, '', async () => {
    const cached = await ctx.store.cache?.().byField<StoredApiObject>(ctx.prefix, index, value);
    if (cached) return cached.map((o) => present(o));
    return filtered(ctx, (key, o) => fieldValues(fieldIndexes[index](key, o)).includes(value));
  });
}

/** The objects of the kind whose instant in the time index `index` is at or before `at` (epoch ms), in name order. */
export function dueBy(ctx: RegistryContext, index: TimeIndexName, at: number): Promise<KubeObject[]> {
  return storeCall(ctx, '', async () => {
    const cached = await ctx.store.cache?.().dueBy<StoredApiObject>(ctx.prefix, index, at);
    if (cached) return cached.map((o) => present(o));
    return filtered(ctx, (key, o) => {
      const t = timeIndexes[index](key, o);
      return t !== undefined && Number.isFinite(t) && t <= at;
    });
  });
}
