import type { AuditEvent } from '../api/audit-event.js';
import type { Within } from '../api/selectors.js';
import type { CacheReads } from './cache-reads.js';
import type { Fence } from './fence.js';

/**
 * The Store interface, modelled on kube-apiserver's storage.Interface: objects are JSON values under
 * string keys, every write gets the next value of one global revision, and that revision is the
 * object's metadata.resourceVersion.
 */

/**
 * Any persisted object. The store reads and writes only metadata.uid and metadata.resourceVersion.
 * A type alias without an index signature, so generated interfaces such as Team fit it.
 */
export type StoredObject = {
  metadata?: { uid?: string; resourceVersion?: string };
};

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface ListOptions {
  /** At most this many items; 0 or absent means all. */
  limit?: number;
  /** Return keys strictly after this one (the continue position). */
  after?: string;
  /** Read the state as of this revision; absent means the current revision. */
  revision?: number;
  /**
   * Only objects carrying one of these field-index values are wanted (the caller filters what it
   * reads anyway): a store that keeps the indexes (the watch cache) reads just those; another reads all.
   */
  within?: Within;
}

export interface ListResult<T> {
  items: T[];
  /** The revision the list was read at. */
  revision: number;
  /** The key of the last item returned, when more items follow it. */
  continueAfter?: string;
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent<T = StoredObject> {
  type: EventType;
  key: string;
  revision: number;
  /** The new object; for DELETED, the object as it was when deleted, at the deletion revision. */
  object: T;
  /** The object before this event (MODIFIED and DELETED), when history still holds it. */
  prevObject?: T;
  /** The characters of stored JSON it was decoded from (object and previous version): what it weighs in a watcher's queue. */
  chars?: number;
}

/** A running watch: iterate it for events; stop() ends the iteration. */
export interface StoreWatch<T = StoredObject> extends AsyncIterable<StoreEvent<T>> {
  stop(): void;
  /**
   * The revision up to which every event (of any key) has been examined: a safe bookmark. Every
   * event up to it is handed to the iteration, which ends (with an error or not) only after them.
   */
  progress(): number;
  /** Settles once the watch could start (its revision checked against history): rejects with why it could not. */
  started: Promise<void>;
}

/**
 * tryUpdate's answer when the object is to go rather than change (kube: a terminating object
 * whose last finalizer was just removed). The store deletes it at the revision it read, in the
 * same retry loop, and guaranteedUpdate resolves with `object`.
 */
export class Removal<T> {
  constructor(readonly object: T) {}
}

/** Computes the next version of an object, or its Removal; throwing aborts the update with that error. */
export type TryUpdate<T> = (current: T) => T | Removal<T> | Promise<T | Removal<T>>;

/**
 * Computes the secondary index values of an object: undefined leaves it unindexed; an object may
 * carry two (an access key is found by its current value's hash and, during a rotation's overlap,
 * by its previous value's). Each value is unique among live objects, and getByIndex finds the
 * object by either.
 */
export type Indexer = (key: string, obj: StoredObject) => IndexValue;
export type IndexValue = string | readonly string[] | undefined;

/** How many index values an object may carry: the backends keep two columns. */
export const maxIndexValues = 2;

/** An indexer's answer as the backends take it: distinct values, at most two, in the order given. */
export function indexValues(value: IndexValue): readonly string[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return [value];
  const distinct = [...new Set(value)];
  if (distinct.length > maxIndexValues) throw new Error(`an object carries at most ${maxIndexValues} index values`);
  return distinct;
}

/**
 * A scan's prefilter given as data: the rows whose stored JSON holds `text`. A backend tests it
 * where the rows are (SQLite's instr, PostgreSQL's strpos) and sends only those, so a scan for a
 * rare name reads the few rows that hold it rather than decoding, or even receiving, every row.
 */
export interface TextFilter {
  readonly text: string;
}

/** A scan's prefilter on each row's stored JSON: a test, or a text the row must hold. */
export type ScanFilter = ((encoded: string) => boolean) | TextFilter;

/** The prefilter as a test of one row's JSON. */
export const scanTest = (filter: ScanFilter): ((encoded: string) => boolean) =>
  typeof filter === 'function' ? filter : (encoded) => encoded.includes(filter.text);

/** The text a backend may test the rows for itself, if the prefilter is one (none for '': every row). */
export const scanText = (filter: ScanFilter): string | undefined => (typeof filter === 'function' || filter.text === '' ? undefined : filter.text);

export interface Store {
  /**
   * Installs the indexer used from now on, before anything is written. One per store: the registry
   * installs the one it looks access keys up by.
   */
  setIndexer(indexer: Indexer): void;
  /** The live objects under prefix carrying the index value `value` (as either of theirs): indexed reads, no scan. */
  getByIndex<T extends StoredObject>(prefix: string, value: string): Promise<T[]>;
  /** Writes a new object; fails with KeyExists when the key holds a live object. */
  create<T extends StoredObject>(key: string, obj: T, opts?: WriteOptions<T>): Promise<T>;
  get<T extends StoredObject>(key: string): Promise<T>;
  list<T extends StoredObject>(prefix: string, opts?: ListOptions): Promise<ListResult<T>>;
  /**
   * Every live object under prefix, a page at a time, decoding only the rows whose raw encoding
   * mightMatch accepts: background work finds the few objects it acts on without parsing them all.
   */
  scan<T extends StoredObject>(prefix: string, mightMatch: ScanFilter, pageSize?: number): AsyncGenerator<T>;
  /**
   * Reads the current object, checks preconditions, calls tryUpdate and writes the result if it
   * differs, retrying from a fresh read when another writer got there first. An unchanged result
   * writes nothing and keeps the resourceVersion; a Removal deletes the version that was read.
   */
  guaranteedUpdate<T extends StoredObject>(
    key: string,
    preconditions: Preconditions | undefined,
    tryUpdate: TryUpdate<T>,
    opts?: WriteOptions<T>,
  ): Promise<T>;
  /** Removes the object if preconditions hold; returns it as it was, at the deletion revision. */
  delete<T extends StoredObject>(key: string, preconditions?: Preconditions, opts?: WriteOptions<T>): Promise<T>;
  /** Every event under prefix with a revision after fromRevision, in revision order. */
  watch<T extends StoredObject>(prefix: string, fromRevision: number): StoreWatch<T>;
  /** The revision of the latest write. */
  currentRevision(): Promise<number>;
  /** History at or before this revision is gone; watching or listing from it is Expired. */
  compactedRevision(): Promise<number>;
  /**
   * Removes a top-level property (the sealed secrets) from every revision of the key but its live
   * one, at once rather than at the next compaction: history keeps its events, not old secrets.
   */
  scrubHistory(key: string, property: string, opts?: FenceOption): Promise<void>;
  /** Drops history that no object needs at revisions up to and including this one. */
  compact(revision: number, opts?: FenceOption): Promise<void>;
  /** Cheap liveness check used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** The reads a layer keeping every object in memory answers (cache-reads.ts); absent without one. */
  cache?(): CacheReads;
}

/** One row of the log as the backends hand it to the watch fan-out. */
export interface LogRecord {
  revision: number;
  key: string;
  type: EventType;
  value: string;
  prevValue?: string;
  prevRevision?: number;
}

/** Where the store's own loops (the log reader, a backend's listener) report trouble; pino fits. */
export interface StoreLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** For stores opened without a logger (the CLI's embedded commands). */
export const silentLog: StoreLog = { error: () => {}, warn: () => {}, info: () => {} };

/** A write about to be stored, as its audit event describes it. */
export interface PendingWrite<T> {
  /** The version written; for a removal, the object as it goes. */
  object: T;
  /** The version it replaces (updates and removals). */
  before?: T;
  removed: boolean;
}

/**
 * The audit event a write stores in its own transaction, so an acknowledged write always has its
 * event and a failed one never does. The backend sets objectRef.resourceVersion to the write's revision.
 */
export interface WriteAudit<T> {
  /** The event for the write about to be stored; undefined records none. Called once per attempt. */
  eventOf(write: PendingWrite<T>): AuditEvent | undefined;
  /** Told after the commit, with the event as stored (the --audit-log file's line). */
  committed?(event: AuditEvent): void;
}

/** The fence of a write: the lease's, for background work (fence.ts); none for a request's write. */
export interface FenceOption {
  fence?: Fence | undefined;
}

export interface WriteOptions<T> extends FenceOption {
  audit?: WriteAudit<T> | undefined;
  /**
   * A write the server makes on its own account that must land on an object at the stored bound
   * (encode.ts boundedSize): a leaked key's disabling, padded by whoever holds the value; status; a
   * deletion starting. Never inferred from a fence: the GitOps sidecar's writes are fenced and carry
   * what Git says.
   */
  mayPassStoredBound?: boolean;
}

/** The first key after every key with this prefix, for range scans. */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
