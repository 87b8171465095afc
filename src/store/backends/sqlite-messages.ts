/**
 * What crosses the thread boundary between the store and its SQLite worker threads: requests,
 * replies, and errors as plain data (structured clone drops an Error's class), rebuilt on the
 * main thread as the StorageError the in-thread backend would have thrown.
 */
import { StorageError, type StorageErrorCode } from '../errors.js';
import type { SqliteOptions } from './sqlite-backend.js';

/** writer: the connection that writes, in batches; reader: reads that must not wait behind a write lock. */
export type WorkerRole = 'writer' | 'reader';

export interface WorkerConfig extends SqliteOptions {
  path: string;
  role: WorkerRole;
  /** Most writes committed in one transaction: bounds how long one commit holds the lock. */
  maxBatch: number;
}

export interface Request {
  id: number;
  op: string;
  args: unknown[];
}

export interface ErrorData {
  message: string;
  storage?: { code: StorageErrorCode; key: string; revision?: number };
  /** SQLite's error code (SQLITE_...), when SQLite raised it. */
  code?: string;
}

export type Reply = { id: number; value: unknown } | { id: number; error: ErrorData };

/** An error as data, to post to the other thread. */
export function errorData(err: unknown): ErrorData {
  if (err instanceof StorageError) {
    return { message: err.message, storage: { code: err.code, key: err.key, ...(err.revision !== undefined ? { revision: err.revision } : {}) } };
  }
  const e = err as { message?: unknown; code?: unknown };
  return { message: String(e?.message ?? err), ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
}

/** The error posted by errorData, rebuilt: a StorageError of the same code, else an Error carrying SQLite's code. */
export function rebuildError(data: ErrorData): Error {
  if (data.storage) return new StorageError(data.storage.code, data.storage.key, data.message, data.storage.revision);
  return Object.assign(new Error(data.message), data.code ? { code: data.code } : {});
}
