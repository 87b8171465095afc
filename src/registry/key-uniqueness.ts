/** Two access keys may never share a value: authentication could not tell them apart. */
import { invalid } from '../api/errors.js';
import type { StoredApiObject } from '../api/secrets.js';
import { keyOf, type RegistryContext } from './context.js';
import { storeCall } from './storage-errors.js';

const probes = new WeakSet<object>();

/** Whether a write failed because the key value it chose is another key's: it told the caller so. */
export const revealsKeyValue = (err: unknown): boolean => typeof err === 'object' && err !== null && probes.has(err);

export async function assertKeyUnused(ctx: RegistryContext, stored: StoredApiObject, name: string): Promise<void> {
  const hash = stored.sealed?.keyHash;
  if (!hash) return;
  const holders = await storeCall(ctx, name, () => ctx.store.getByIndex<StoredApiObject>(ctx.prefix, hash));
  if (holders.some((h) => keyOf(ctx, h.metadata.name!) !== keyOf(ctx, name))) {
    // Saying so tells the caller that the value is someone's key: as much as trying it as a bearer
    // key would, so the server counts it as a failed authentication (revealsKeyValue).
    const err = invalid(ctx.gk, name, [{ type: 'Invalid', field: 'spec.key', detail: 'this key value is already in use; choose another' }]);
    probes.add(err);
    throw err;
  }
}
