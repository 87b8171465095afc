/** The one place storage errors become API errors. */
import { ApiError, conflict, alreadyExists, expired, gone, invalid, notFound, serviceUnavailable, timeout, tooLarge, tooLargeResourceVersion, type GroupKind } from '../api/errors.js';
import { isStorageError, type StorageError, type StorageErrorCode } from '../store/errors.js';
import type { RegistryContext } from './context.js';

/**
 * The API error for a storage error (anything else is returned as it is). `expiredMessage` words
 * a 410 for what the caller asked (a list's continue token or resourceVersion).
 */
export function toApiError(err: unknown, ctx: RegistryContext, name: string, expiredMessage: (message: string) => string = (m) => m): unknown {
  if (!isStorageError(err)) return err;
  switch (err.code) {
    case 'NotFound':
      return notFound(ctx.gr, name);
    case 'KeyExists':
      return alreadyExists(ctx.gr, name);
    case 'IndexConflict':
      // The one unique index is an access key's hash: a concurrent create with the same value lost.
      return keyValueInUse(ctx.gk, name);
    case 'Conflict':
      return conflict(ctx.gr, name);
    case 'PreconditionFailed':
      return preconditionFailed(conflict(ctx.gr, name, err.message));
    case 'Expired':
      return expired(expiredMessage(err.message));
    case 'TooLargeResourceVersion':
      return tooLargeResourceVersion(err.message);
    case 'WatchOverflow':
      return gone(`the watch fell too far behind and was closed: ${err.message}`);
    case 'Unreachable':
    case 'Closed':
      return unavailable(err);
    case 'TooLarge':
      return tooLarge(err.message);
    case 'Fenced':
      // Only background work carries a fence, and it is logged there (server/leader.ts): no client sees it.
      return conflict(ctx.gr, name, err.message);
  }
}

/** How long clients are told to wait: the PostgreSQL backend notices a database back within about a second. */
const retryAfterSeconds = 1;

/**
 * Storage out of reach (or closing): 503 with Retry-After, which client-go and kubectl retry.
 * Also used by the HTTP layer for a StorageError that reaches it outside the registry (authentication).
 */
export function unavailable(err: StorageError): ApiError {
  return serviceUnavailable(`storage is unavailable: ${err.message}`, retryAfterSeconds);
}

/** Whether err is a StorageError that means storage cannot be reached now. */
export function isUnavailable(err: unknown): err is StorageError {
  return isStorageError(err, 'Unreachable') || isStorageError(err, 'Closed');
}

/** Runs a store call, converting its errors. */
export async function storeCall<T>(ctx: RegistryContext, name: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toApiError(err, ctx, name);
  }
}

/**
 * Runs a store call whose `expected` storage error is an answer, not a failure (NotFound for "is it
 * there", PreconditionFailed for "it changed meanwhile"): undefined then; any other error converted.
 */
export async function storeCallUnless<T>(ctx: RegistryContext, name: string, expected: StorageErrorCode, call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    if (isStorageError(err, expected)) return undefined;
    throw toApiError(err, ctx, name);
  }
}

/**
 * Whether a write guarded by what background work read lost to another writer (the object changed
 * or went: 404, 409, or 422 from a failed JSON-patch test); the next pass decides again. Anything
 * else (storage out of reach, a bug) must reach the loop, which logs it.
 */
export function lostRace(err: unknown): boolean {
  return err instanceof ApiError && (err.code === 404 || err.code === 409 || err.code === 422);
}

/**
 * The 409 of a write whose preconditions (the uid or resourceVersion the writer read) the stored
 * object no longer meets, told from other conflicts (the store's contention) by failedPrecondition.
 */
const preconditionErrors = new WeakSet<object>();

function preconditionFailed(err: ApiError): ApiError {
  preconditionErrors.add(err);
  return err;
}

/** Whether a write failed because the object was no longer the one its preconditions named. */
export const failedPrecondition = (err: unknown): boolean => typeof err === 'object' && err !== null && preconditionErrors.has(err);

/**
 * The answer that an access key's value is already another key's: 422 on spec.key. It tells the
 * caller the value is someone's key, as much as authenticating with it would, so the server counts
 * it against the failed-authentication budget (src/server/auth/guard.ts probing): revealsKeyValue
 * recognises the errors made here, whether the check before the write (keys.ts) or the store's
 * unique index (a concurrent create with the same value, IndexConflict above) gave it.
 */
const keyValueErrors = new WeakSet<object>();

export function keyValueInUse(gk: GroupKind, name: string): ApiError {
  const err = invalid(gk, name, [{ type: 'Invalid', field: 'spec.key', detail: 'this key value is already in use; choose another' }]);
  keyValueErrors.add(err);
  return err;
}

/** Whether a write failed because the key value it chose is another key's. */
export const revealsKeyValue = (err: unknown): boolean => typeof err === 'object' && err !== null && keyValueErrors.has(err);
