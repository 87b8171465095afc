/** The one place storage errors become API errors. */
import { conflict, alreadyExists, expired, gone, invalid, notFound, serviceUnavailable, timeout } from '../api/errors.js';
import { isStorageError } from '../store/errors.js';
import type { RegistryContext } from './context.js';

export function toApiError(err: unknown, ctx: RegistryContext, name: string): unknown {
  if (!isStorageError(err)) return err;
  switch (err.code) {
    case 'NotFound':
      return notFound(ctx.gr, name);
    case 'KeyExists':
      return alreadyExists(ctx.gr, name);
    case 'IndexConflict':
      // The one unique index is an access key's hash: a concurrent create with the same value lost.
      return invalid(ctx.gk, name, [{ type: 'Invalid', field: 'spec.key', detail: 'this key value is already in use; choose another' }]);
    case 'Conflict':
      return conflict(ctx.gr, name);
    case 'PreconditionFailed':
      return conflict(ctx.gr, name, err.message);
    case 'Expired':
      return expired(err.message);
    case 'TooLargeResourceVersion':
      return timeout(err.message, 1);
    case 'WatchOverflow':
      return gone(`the watch fell too far behind and was closed: ${err.message}`);
    case 'Unreachable':
    case 'Closed':
      return serviceUnavailable(`storage is unavailable: ${err.message}`, 1);
  }
}

/** Runs a store call, converting its errors. */
export async function storeCall<T>(ctx: RegistryContext, name: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toApiError(err, ctx, name);
  }
}
