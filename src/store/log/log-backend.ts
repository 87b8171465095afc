/**
 * What a backend must provide: a log of rows, one per revision, each a key's new value or its
 * tombstone. Every method may answer synchronously (SQLite, memory) or with a promise (PostgreSQL).
 * `audit` is the write's audit event: stored in the write's own transaction (only if the row is
 * appended) with objectRef.resourceVersion set to the row's revision (auditRow).
 * A write given a `fence` (the fencing token of background work, fence.ts) first checks it against
 * the background-work lease's current token in the write's own transaction and throws
 * StorageError Fenced when it is stale; a backend whose lease is local (memory) ignores it.
 */
import type { AuditEvent } from '../../api/audit-event.js';
import type { LogRecord } from '../types.js';

type MaybePromise<T> = T | Promise<T>;

export interface Row {
  key: string;
  revision: number;
  value: string;
}

export interface LogBackend {
  /** The key's latest row, or undefined when the key is absent or deleted. */
  latest(key: string): MaybePromise<Row | undefined>;
  /**
   * Appends a creation row; throws StorageError KeyExists when the key holds a live object. Index
   * values are unique among live objects: a value another live key carries throws IndexConflict
   * (create and update alike), checked in the same transaction as the write. `index` holds the
   * row's index values (indexValues: none, one or two, distinct).
   */
  create(key: string, value: string, index: readonly string[], audit?: AuditEvent, fence?: number): MaybePromise<number>;
  /** Appends a new value if the key's latest live row is still `expected`; undefined otherwise. */
  update(key: string, value: string, expected: number, index: readonly string[], audit?: AuditEvent, fence?: number): MaybePromise<number | undefined>;
  /** Appends a tombstone if the key's latest live row is still `expected`; undefined otherwise. */
  delete(key: string, expected: number, audit?: AuditEvent, fence?: number): MaybePromise<number | undefined>;
  /**
   * Keys in [start, end) and after `after`, live at `revision`, in key order; limit 0 = all. With
   * `contains`, only the rows whose value holds that text (the limit counts those).
   */
  list(start: string, end: string, after: string, revision: number, limit: number, contains?: string): MaybePromise<Row[]>;
  /** Removes the top-level `property` from every row of the key but its latest live one (tombstones included). */
  rewriteHistory(key: string, property: string, fence?: number): MaybePromise<void>;
  /** Live keys in [start, end) whose latest row carries this index value (as its first or its second). */
  findByIndex(start: string, end: string, index: string): MaybePromise<Row[]>;
  readSince(after: number, limit: number): MaybePromise<LogRecord[]>;
  currentRevision(): MaybePromise<number>;
  compactedRevision(): MaybePromise<number>;
  compact(revision: number, fence?: number): MaybePromise<void>;
  ping(): MaybePromise<void>;
  close(): MaybePromise<void>;
}
