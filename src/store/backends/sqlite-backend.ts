/**
 * The SQLite log itself, on one better-sqlite3 connection (of the main thread, or of a worker
 * thread: sqlite-worker.ts), laid out as kine lays out etcd's keyspace. Table kv holds one row per
 * revision (id); a unique (name, prev_revision) index means two writers can never both append after
 * the same row. Writes run in BEGIN IMMEDIATE transactions (savepoints when a batch already opened
 * one), so several processes may share the file.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { indexConflict, keyExists, StorageError } from '../errors.js';
import type { LogBackend, Row } from '../log/log-backend.js';
import { checkSqliteFence } from './sqlite-lease.js';
import { switchToWal } from './sqlite-wal.js';
import { withoutProperty } from '../scrub.js';
import type { LogRecord } from '../types.js';
import type { AuditEvent } from '../../api/audit-event.js';
import { atRevision, auditInsert, auditRow } from '../audit/audit-trail.js';
import { createSchema, listSql } from './sqlite-schema.js';

interface KvRow {
  id: number;
  name: string;
  created: number;
  deleted: number;
  prev_revision: number;
  value: string;
  prev_value?: string | null;
}

export interface SqliteOptions {
  /** SQLite's synchronous pragma: FULL (default) survives power loss, NORMAL survives process crashes. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a writer waits for another process's write lock. */
  busyTimeoutMs?: number;
}

/** Options of one connection: whether it creates the schema (the first one opened does). */
interface ConnectionOptions extends SqliteOptions {
  init?: boolean;
}

/**
 * The WAL's size once a checkpoint has emptied it: a reader holding an old snapshot makes the WAL
 * grow while it reads, and without a limit the file keeps that size for good.
 */
export const walSizeLimitBytes = 4 * 1024 * 1024;

/** How long a write waits for another process's write lock unless told otherwise. */
export const defaultBusyTimeoutMs = 5000;

/**
 * SQLITE_BUSY once busy_timeout ran out (another process held the write lock all along) becomes
 * Unreachable, which the API answers with 503 and Retry-After; anything else is returned as it is.
 */
export function busyAsUnreachable(err: unknown, waitedMs: number): unknown {
  if ((err as { code?: string }).code !== 'SQLITE_BUSY') return err;
  return new StorageError('Unreachable', '', `the SQLite file is locked by another process (a write waited ${waitedMs} ms for its lock)`);
}

/**
 * The database holds hashes of every key and sealed (encrypted) fields: it is made 0600 before
 * SQLite opens it, and SQLite gives its -wal and -shm files the database file's mode. Files left
 * wider by an older version are narrowed.
 */
export function privateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  for (const f of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
}

export class SqliteBackend implements LogBackend {
  readonly db: Database.Database;
  private readonly busyTimeoutMs: number;
  private readonly stmts;
  private readonly txCreate: Database.Transaction<(key: string, value: string, index: readonly string[], audit: AuditEvent | undefined) => number>;
  private readonly txAppend: Database.Transaction<
    (key: string, value: string | undefined, expected: number, index: readonly string[], audit: AuditEvent | undefined) => number | undefined
  >;
  private readonly txCompact: Database.Transaction<(revision: number) => void>;

  constructor(path: string, opts: ConnectionOptions) {
    const init = opts.init ?? true;
    if (init && path !== ':memory:') privateFile(path);
    this.db = new Database(path);
    this.busyTimeoutMs = opts.busyTimeoutMs ?? defaultBusyTimeoutMs;
    // A file system without WAL support (some network mounts) would silently keep another mode: refuse it.
    switchToWal(this.db, path, this.busyTimeoutMs);
    this.db.pragma(`synchronous = ${opts.synchronous ?? 'FULL'}`);
    // Rewritten or deleted rows (scrubbed secrets, compacted history) are zeroed, not left in free pages.
    this.db.pragma('secure_delete = ON');
    this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    this.db.pragma(`journal_size_limit = ${walSizeLimitBytes}`);
    if (init) createSchema(this.db);
    const db = this.db;
    this.stmts = {
      latest: db.prepare<[string], KvRow>(
        'SELECT id, name, created, deleted, prev_revision, value FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1',
      ),
      insert: db.prepare<[string, number, number, number, string, string | null, string | null]>(
        'INSERT INTO kv (name, created, deleted, prev_revision, value, idx, idx2) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      // Either column may hold the value: SQLite answers the OR from both partial indexes.
      byIndex: db.prepare<{ v: string; start: string; end: string }, KvRow>(
        `SELECT kv.id, kv.name, kv.value FROM kv
          WHERE (kv.idx = @v OR kv.idx2 = @v) AND kv.name >= @start AND kv.name < @end AND kv.deleted = 0
            AND kv.id = (SELECT MAX(k2.id) FROM kv k2 WHERE k2.name = kv.name)
          ORDER BY kv.name`,
      ),
      // Streams keys in index order and stops at the limit: the correlated MAX keeps only the row
      // that was current at the revision. One lower bound per statement: given both `name >= start`
      // and `name > after`, SQLite starts the index range at `start` and steps over every key up to
      // `after`, so that paging through n keys visited n²/2 rows (a million keys' cache fill spent
      // 50 s here instead of 2.5 s).
      list: db.prepare<{ from: string; end: string; rev: number; limit: number }, KvRow>(listSql('>=')),
      listAfter: db.prepare<{ from: string; end: string; rev: number; limit: number }, KvRow>(listSql('>')),
      listHolding: db.prepare<{ from: string; end: string; rev: number; limit: number; text: string }, KvRow>(listSql('>=', true)),
      listAfterHolding: db.prepare<{ from: string; end: string; rev: number; limit: number; text: string }, KvRow>(listSql('>', true)),
      since: db.prepare<[number, number], KvRow>(
        `SELECT kv.id, kv.name, kv.created, kv.deleted, kv.prev_revision, kv.value, p.value AS prev_value
           FROM kv LEFT JOIN kv p ON p.id = kv.prev_revision AND kv.created = 0
          WHERE kv.id > ? ORDER BY kv.id LIMIT ?`,
      ),
      revision: db.prepare<[], { seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'kv'"),
      getMeta: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE key = ?'),
      setMeta: db.prepare<[string, number]>(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
      // Drops rows superseded at or before the revision, and tombstones at or before it.
      compact: db.prepare<{ rev: number }>(
        `DELETE FROM kv WHERE id <= @rev AND (deleted = 1
           OR EXISTS (SELECT 1 FROM kv k2 WHERE k2.name = kv.name AND k2.id > kv.id AND k2.id <= @rev))`,
      ),
      ping: db.prepare('SELECT 1'),
      history: db.prepare<[string], { id: number; value: string }>('SELECT id, value FROM kv WHERE name = ? ORDER BY id'),
      rewrite: db.prepare<[string, number]>('UPDATE kv SET value = ? WHERE id = ?'),
      uniqueHolder: db.prepare<[string], { name: string }>('SELECT name FROM kv_unique WHERE idx = ?'),
      uniqueRelease: db.prepare<[string]>('DELETE FROM kv_unique WHERE name = ?'),
      uniqueClaim: db.prepare<[string, string]>('INSERT INTO kv_unique (idx, name) VALUES (?, ?)'),
      auditInsert: db.prepare<[string, string, string, string, string, string]>(auditInsert(() => '?')),
    };
    /** The write's audit event, in the write's transaction, at the revision just appended. */
    const audited = (revision: number, audit: AuditEvent | undefined): number => {
      if (audit) this.stmts.auditInsert.run(...auditRow(atRevision(audit, revision)));
      return revision;
    };
    /** Moves the key's unique index values to `index` (none, one or two), in the caller's transaction. */
    const claim = (key: string, index: readonly string[]) => {
      for (const v of index) {
        const holder = this.stmts.uniqueHolder.get(v);
        if (holder && holder.name !== key) throw indexConflict(key);
      }
      this.stmts.uniqueRelease.run(key);
      for (const v of index) this.stmts.uniqueClaim.run(v, key);
    };
    this.txCreate = db.transaction((key: string, value: string, index: readonly string[], audit: AuditEvent | undefined) => {
      const last = this.stmts.latest.get(key);
      if (last && !last.deleted) throw keyExists(key);
      claim(key, index);
      return audited(Number(this.stmts.insert.run(key, 1, 0, last?.id ?? 0, value, index[0] ?? null, index[1] ?? null).lastInsertRowid), audit);
    });
    // value undefined appends a tombstone carrying the last value.
    this.txAppend = db.transaction((key: string, value: string | undefined, expected: number, index: readonly string[], audit: AuditEvent | undefined) => {
      const last = this.stmts.latest.get(key);
      if (!last || last.deleted || last.id !== expected) return undefined;
      const deleted = value === undefined ? 1 : 0;
      claim(key, deleted ? [] : index);
      return audited(Number(this.stmts.insert.run(key, 0, deleted, last.id, value ?? last.value, index[0] ?? null, index[1] ?? null).lastInsertRowid), audit);
    });
    this.txCompact = db.transaction((revision: number) => {
      this.stmts.compact.run({ rev: revision });
      this.stmts.setMeta.run('compact_revision', revision);
    });
  }

  /** Runs a write; a lock another process held past busy_timeout becomes Unreachable. */
  private write<T>(run: () => T): T {
    try {
      return run();
    } catch (err) {
      throw busyAsUnreachable(err, this.busyTimeoutMs);
    }
  }

  latest(key: string): Row | undefined {
    const r = this.stmts.latest.get(key);
    return r && !r.deleted ? { key, revision: r.id, value: r.value } : undefined;
  }

  /** Runs a write, checking its fencing token (sqlite-lease.ts) first in the same transaction when it has one. */
  private fenced<T>(fence: number | undefined, key: string, run: () => T): T {
    if (fence === undefined) return run();
    return this.db
      .transaction(() => {
        checkSqliteFence(this.db, fence, key);
        return run();
      })
      .immediate();
  }

  create(key: string, value: string, index: readonly string[], audit?: AuditEvent, fence?: number): number {
    return this.write(() => this.fenced(fence, key, () => this.txCreate.immediate(key, value, index, audit)));
  }

  update(key: string, value: string, expected: number, index: readonly string[], audit?: AuditEvent, fence?: number): number | undefined {
    return this.write(() => this.fenced(fence, key, () => this.txAppend.immediate(key, value, expected, index, audit)));
  }

  delete(key: string, expected: number, audit?: AuditEvent, fence?: number): number | undefined {
    return this.write(() => this.fenced(fence, key, () => this.txAppend.immediate(key, undefined, expected, [], audit)));
  }

  rewriteHistory(key: string, property: string, fence?: number): void {
    const rewrite = this.db.transaction(() => {
      const live = this.latest(key)?.revision;
      for (const r of this.stmts.history.all(key)) {
        const next = r.id === live ? r.value : withoutProperty(r.value, property);
        if (next !== r.value) this.stmts.rewrite.run(next, r.id);
      }
    });
    this.write(() => this.fenced(fence, key, () => rewrite.immediate()));
  }

  findByIndex(start: string, end: string, index: string): Row[] {
    return this.stmts.byIndex.all({ v: index, start, end }).map((r) => ({ key: r.name, revision: r.id, value: r.value }));
  }

  list(start: string, end: string, after: string, revision: number, limit: number, contains?: string): Row[] {
    const from = after >= start ? after : start;
    const params = { from, end, rev: revision, limit: limit > 0 ? limit : -1 };
    const rows =
      contains === undefined
        ? (after >= start ? this.stmts.listAfter : this.stmts.list).all(params)
        : (after >= start ? this.stmts.listAfterHolding : this.stmts.listHolding).all({ ...params, text: contains });
    return rows.map((r) => ({ key: r.name, revision: r.id, value: r.value }));
  }

  readSince(after: number, limit: number): LogRecord[] {
    return this.stmts.since.all(after, limit).map((r) => {
      const record: LogRecord = {
        revision: r.id,
        key: r.name,
        type: r.created ? 'ADDED' : r.deleted ? 'DELETED' : 'MODIFIED',
        value: r.value,
      };
      if (typeof r.prev_value === 'string') {
        record.prevValue = r.prev_value;
        record.prevRevision = r.prev_revision;
      }
      return record;
    });
  }

  currentRevision(): number {
    return this.stmts.revision.get()?.seq ?? 0;
  }

  compactedRevision(): number {
    return this.stmts.getMeta.get('compact_revision')?.value ?? 0;
  }

  compact(revision: number, fence?: number): void {
    if (revision <= this.compactedRevision()) return;
    this.write(() => this.fenced(fence, '', () => this.txCompact.immediate(revision)));
  }

  ping(): void {
    this.stmts.ping.get();
  }

  /**
   * Checkpoints the whole WAL and truncates it to nothing, if it outgrew its limit and no reader
   * needs its frames: never waits (a reader or another process's writer makes it a no-op until next time).
   */
  truncateWal(): boolean {
    if (this.db.name === ':memory:') return false;
    let size = 0;
    try {
      size = statSync(`${this.db.name}-wal`).size;
    } catch {
      return false;
    }
    if (size <= walSizeLimitBytes) return false;
    this.db.pragma('busy_timeout = 0');
    try {
      const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      return result?.busy === 0;
    } catch {
      return false;
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
  }

  /** A one-row write nobody reads: whether the file takes writes again (space, a writable mount). */
  probeWrite(): void {
    this.write(() => this.db.transaction(() => this.stmts.setMeta.run('write_probe', Date.now())).immediate());
  }

  /** The durability settings as the live connection reports them (synchronous is per connection, never stored). */
  durability(): { journalMode: string; synchronous: string } {
    const synchronous = ['OFF', 'NORMAL', 'FULL', 'EXTRA'][Number(this.db.pragma('synchronous', { simple: true }))] ?? 'unknown';
    return { journalMode: String(this.db.pragma('journal_mode', { simple: true })), synchronous };
  }

  close(): void {
    this.db.close();
  }
}

