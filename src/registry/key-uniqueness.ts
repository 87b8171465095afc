/** Two access keys may never share a value: authentication could not tell them apart. */
import { invalid } from '../api/errors.js';
import type { StoredApiObject } from '../api/secrets.js';
import { keyOf, type RegistryContext } from './context.js';
import { storeCall } from './storage-errors.js';

export async function assertKeyUnused(ctx: RegistryContext, stored: StoredApiObject, name: string): Promise<void> {
  const hash = stored.sealed?.keyHash;
  if (!hash) return;
  const holders = await storeCall(ctx, name, () => ctx.store.getByIndex<StoredApiObject>(ctx.prefix, hash));
  if (holders.some((h) => keyOf(ctx, h.metadata.name!) !== keyOf(ctx, name))) {
    // Saying so reveals nothing a caller who already knows the value could not learn by using it.
    throw invalid(ctx.gk, name, [{ type: 'Invalid', field: 'spec.key', detail: 'this key value is already in use; choose another' }]);
  }
}
