/**
 * The answer that an access key's value is already another key's: 422 on spec.key. It tells the
 * caller the value is someone's key, as much as authenticating with it would, so the server counts
 * it against the failed-authentication budget (src/server/auth/guard.ts probing): revealsKeyValue
 * recognises the errors made here, whether the check before the write or the store's unique
 * index (a concurrent create with the same value) gave it.
 */
import { invalid, type ApiError, type GroupKind } from '../api/errors.js';

const made = new WeakSet<object>();

export function keyValueInUse(gk: GroupKind, name: string): ApiError {
  const err = invalid(gk, name, [{ type: 'Invalid', field: 'spec.key', detail: 'this key value is already in use; choose another' }]);
  made.add(err);
  return err;
}

/** Whether a write failed because the key value it chose is another key's. */
export const revealsKeyValue = (err: unknown): boolean => typeof err === 'object' && err !== null && made.has(err);
