/** The Store every backend shares: preconditions, the update retry loop, listing and watching. */
import { boundedSize, decodeObject, encodeObject } from '../encode.js';
import { StorageError, expired, isStorageError, notFound } from '../errors.js';
import { overdue, type Fence } from '../fence.js';
import type { LogBackend, Row } from './log-backend.js';
import { checkPreconditions } from '../preconditions.js';
import { LogTail } from './log-tail.js';
import { withoutProperty } from '../scrub.js';
import {
  prefixEnd,
  Removal,
  silentLog,
  type StoreLog,
  type Indexer,
  indexValues,
  scanTest,
  scanText,
  type ListOptions,
  type ScanFilter,
  type ListResult,
  type Preconditions,
  type Store,
  type StoreWatch,
  type StoredObject,
  type TryUpdate,
  type WriteAudit,
  type WriteOptions,
  type FenceOption,
} from '../types.js';
import type { AuditEvent } from '../../api/audit-event.js';
import { atRevision } from '../audit/audit-trail.js';

export interface LogStoreOptions {
  /** How often watchers look for writes made by other processes; 0 for a single-process store. */
  pollIntervalMs: number;
  log?: StoreLog;
}

/** Guards against a livelock when writers keep racing: far more than real contention needs. */
const maxUpdateAttempts = 1000;

export class LogStore implements Store {
  private readonly tail: LogTail;
  private closed = false;
  private indexer: Indexer = () => undefined;

  constructor(
    protected readonly backend: LogBackend,
    opts: LogStoreOptions,
  ) {
    this.tail = new LogTail(backend, { pollIntervalMs: opts.pollIntervalMs, log: opts.log ?? silentLog });
  }

  setIndexer(indexer: Indexer): void {
    this.indexer = indexer;
  }

  async getByIndex<T extends StoredObject>(prefix: string, value: string): Promise<T[]> {
    this.assertOpen(prefix);
    const rows = await this.backend.findByIndex(prefix, prefixEnd(prefix), value);
    return rows.map((r) => decodeObject<T>(r.value, r.revision));
  }

  async create<T extends StoredObject>(key: string, obj: T, opts: WriteOptions<T> = {}): Promise<T> {
    this.assertOpen(key);
    const value = boundedSize(key, encodeObject(obj), obj);
    const event = opts.audit?.eventOf({ object: obj, removed: false });
    const revision = await this.fenced(key, opts.fence, (fence) => this.backend.create(key, value, indexValues(this.indexer(key, obj)), event, fence));
    this.written(opts.audit, event, revision);
    return decodeObject<T>(value, revision);
  }

  /** After a commit: watchers look, and the audit hears of its stored event. */
  private written<T>(audit: WriteAudit<T> | undefined, event: AuditEvent | undefined, revision: number): void {
    this.tail.notify();
    if (event) audit?.committed?.(atRevision(event, revision));
  }

  async get<T extends StoredObject>(key: string): Promise<T> {
    this.assertOpen(key);
    const row = await this.backend.latest(key);
    if (!row) throw notFound(key);
    return decodeObject<T>(row.value, row.revision);
  }

  async list<T extends StoredObject>(prefix: string, opts: ListOptions = {}): Promise<ListResult<T>> {
    const { rows, ...page } = await this.listRows(prefix, opts);
    return { items: rows.map((r) => decodeObject<T>(r.value, r.revision)), ...page };
  }

  /** list's page as stored rows (key, revision, encoding): what the watch cache fills itself from. */
  async listRows(prefix: string, opts: ListOptions = {}): Promise<Omit<ListResult<never>, 'items'> & { rows: Row[] }> {
    this.assertOpen(prefix);
    const current = await this.backend.currentRevision();
    const revision = opts.revision ?? current;
    if (revision > current) {
      throw new StorageError(
        'TooLargeResourceVersion',
        prefix,
        `Too large resource version: ${revision}, current: ${current}`,
        current,
      );
    }
    if (opts.revision !== undefined) {
      const compacted = await this.backend.compactedRevision();
      if (revision < compacted) throw expired(prefix, revision, compacted);
    }
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const rows = await this.backend.list(prefix, prefixEnd(prefix), opts.after ?? '', revision, limit ? limit + 1 : 0);
    const more = limit > 0 && rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return more ? { rows: page, revision, continueAfter: page[page.length - 1]!.key } : { rows: page, revision };
  }

  async *scan<T extends StoredObject>(prefix: string, mightMatch: ScanFilter, pageSize = 500): AsyncGenerator<T> {
    this.assertOpen(prefix);
    // A text filter is tested by the backend, where the rows are (only those holding it come back),
    // and here again: the backend's test narrows the read, this one decides.
    const contains = scanText(mightMatch);
    const test = scanTest(mightMatch);
    // Each page is read at the then-current revision: a sweep needs no single snapshot, and holds
    // no old revision back from compaction.
    let after = '';
    for (;;) {
      const rows = await this.backend.list(prefix, prefixEnd(prefix), after, await this.backend.currentRevision(), pageSize, contains);
      for (const row of rows) if (test(row.value)) yield decodeObject<T>(row.value, row.revision);
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1]!.key;
    }
  }

  async guaranteedUpdate<T extends StoredObject>(
    key: string,
    preconditions: Preconditions | undefined,
    tryUpdate: TryUpdate<T>,
    opts: WriteOptions<T> = {},
  ): Promise<T> {
    this.assertOpen(key);
    for (let attempt = 0; attempt < maxUpdateAttempts; attempt++) {
      const row = await this.backend.latest(key);
      if (!row) throw notFound(key);
      const current = decodeObject<T>(row.value, row.revision);
      checkPreconditions(key, preconditions, current);
      const next = await tryUpdate(current);
      if (next instanceof Removal) {
        const event = opts.audit?.eventOf({ object: next.object, before: current, removed: true });
        const revision = await this.fenced(key, opts.fence, (fence) => this.backend.delete(key, row.revision, event, fence));
        if (revision !== undefined) {
          this.written(opts.audit, event, revision);
          return next.object;
        }
        continue; // changed since it was read: decide again on the new version
      }
      const value = encodeObject(next);
      if (value === row.value) return decodeObject<T>(row.value, row.revision);
      boundedSize(key, value, next, row.value, opts.mayPassStoredBound === true);
      const event = opts.audit?.eventOf({ object: next, before: current, removed: false });
      const revision = await this.fenced(key, opts.fence, (fence) => this.backend.update(key, value, row.revision, indexValues(this.indexer(key, next)), event, fence));
      if (revision !== undefined) {
        this.written(opts.audit, event, revision);
        return decodeObject<T>(value, revision);
      }
      // Another writer changed the object after we read it: read it again and recompute.
    }
    throw new StorageError('Conflict', key, `too many concurrent updates to ${key}`);
  }

  async delete<T extends StoredObject>(key: string, preconditions?: Preconditions, opts: WriteOptions<T> = {}): Promise<T> {
    this.assertOpen(key);
    for (let attempt = 0; attempt < maxUpdateAttempts; attempt++) {
      const row = await this.backend.latest(key);
      if (!row) throw notFound(key);
      const current = decodeObject<T>(row.value, row.revision);
      checkPreconditions(key, preconditions, current);
      const event = opts.audit?.eventOf({ object: current, removed: true });
      const revision = await this.fenced(key, opts.fence, (fence) => this.backend.delete(key, row.revision, event, fence));
      if (revision !== undefined) {
        this.written(opts.audit, event, revision);
        return decodeObject<T>(row.value, revision);
      }
    }
    throw new StorageError('Conflict', key, `too many concurrent updates to ${key}`);
  }

  /** Another process wrote (a backend's notification, or a reader that knows): read the log now rather than at the next poll. */
  notifyWatchers(): void {
    this.tail.notify();
  }

  watch<T extends StoredObject>(prefix: string, fromRevision: number): StoreWatch<T> {
    this.assertOpen(prefix);
    return this.tail.watch<T>(prefix, fromRevision);
  }

  async currentRevision(): Promise<number> {
    return this.backend.currentRevision();
  }

  async compactedRevision(): Promise<number> {
    return this.backend.compactedRevision();
  }

  async scrubHistory(key: string, property: string, opts: FenceOption = {}): Promise<void> {
    this.assertOpen(key);
    await this.fenced(key, opts.fence, (fence) => this.backend.rewriteHistory(key, property, fence));
    this.tail.rewrite(key, (value) => withoutProperty(value, property));
  }

  async compact(revision: number, opts: FenceOption = {}): Promise<void> {
    const current = await this.backend.currentRevision();
    await this.fenced('', opts.fence, (fence) => this.backend.compact(Math.min(revision, current), fence));
  }

  async ping(): Promise<void> {
    this.assertOpen('');
    await this.backend.ping();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.tail.close();
    await this.backend.close();
  }

  /**
   * Runs a backend write with the fencing token of the background work it belongs to (fence.ts),
   * none for a request's write; the fence hears of a refusal, and one already overdue here is
   * refused before it reaches the store.
   */
  private async fenced<T>(key: string, fence: Fence | undefined, write: (fence: number | undefined) => T | Promise<T>): Promise<T> {
    if (!fence) return write(undefined);
    try {
      if (!fence.valid()) throw overdue(key, fence.token);
      return await write(fence.token);
    } catch (err) {
      if (isStorageError(err, 'Fenced')) fence.refused(err);
      throw err;
    }
  }

  private assertOpen(key: string): void {
    if (this.closed) throw new StorageError('Closed', key, 'the store is closed');
  }
}
