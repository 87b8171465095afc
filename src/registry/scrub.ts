/**
 * Secrets do not linger in history: when a write replaces or removes an object's sealed values, the
 * superseded revisions lose theirs at once (the store rewrites them), instead of keeping them until
 * compaction. History keeps its events; only the secrets go.
 */
import { isDeepStrictEqual } from 'node:util';
import { sealedField, type StoredApiObject } from '../api/secrets.js';
import { keyOf, type RegistryContext } from './context.js';
import { storeCall } from './storage-errors.js';

/** After a write from `before` to `after` (undefined: removed), scrubs the key's history if its secrets changed. */
export async function scrubReplacedSecrets(ctx: RegistryContext, name: string, before: StoredApiObject | undefined, after: StoredApiObject | undefined): Promise<void> {
  if (!before?.sealed || isDeepStrictEqual(before.sealed, after?.sealed)) return;
  await storeCall(ctx, name, () => ctx.store.scrubHistory(keyOf(ctx, name), sealedField));
}
