/** The storage layer's one error type. The registry turns it into an ApiError in one place. */

export type StorageErrorCode =
  | 'NotFound'
  | 'KeyExists'
  /** Another live object already carries this unique secondary index value (an access key's hash). */
  | 'IndexConflict'
  | 'Conflict'
  | 'PreconditionFailed'
  | 'Expired'
  | 'TooLargeResourceVersion'
  | 'WatchOverflow'
  | 'Unreachable'
  | 'Closed'
  /** An object over the most the store keeps of one (encode.ts maxStoredObjectBytes). */
  | 'TooLarge'
  /** A leader-only write whose fencing token is stale: another replica holds the background-work lease (fence.ts). */
  | 'Fenced';

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    readonly key: string,
    message: string,
    /** For Expired: the oldest revision still available. For TooLargeResourceVersion: the current one. */
    readonly revision?: number,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}

export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}

export const notFound = (key: string) => new StorageError('NotFound', key, `key not found: ${key}`);
export const keyExists = (key: string) => new StorageError('KeyExists', key, `key exists: ${key}`);
export const expired = (key: string, requested: number, compacted: number) =>
  new StorageError('Expired', key, `too old resource version: ${requested} (${compacted})`, compacted);
export const indexConflict = (key: string) => new StorageError('IndexConflict', key, `another object already has the index value of ${key}`);
