/** Two access keys may never share a value: authentication could not tell them apart. */
import type { StoredApiObject } from '../api/secrets.js';
import { keyOf, type RegistryContext } from './context.js';
import { keyValueInUse } from './key-value-in-use.js';
import { storeCall } from './storage-errors.js';

export async function assertKeyUnused(ctx: RegistryContext, stored: StoredApiObject, name: string): Promise<void> {
  const hash = stored.sealed?.keyHash;
  if (!hash) return;
  const holders = await storeCall(ctx, name, () => ctx.store.getByIndex<StoredApiObject>(ctx.prefix, hash));
  if (holders.some((h) => keyOf(ctx, h.metadata.name!) !== keyOf(ctx, name))) {
    throw keyValueInUse(ctx.gk, name);
  }
}
