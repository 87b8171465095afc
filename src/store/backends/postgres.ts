/**
 * The PostgreSQL backend, for several API replicas on one database: the same kine-style log as
 * SQLite. Writers take a transaction-scoped advisory lock, so revisions commit in the order they
 * are numbered and no reader following `id > n` can miss a late commit. Each write NOTIFYs;
 * every replica LISTENs and reads the log by revision, so its watchers see every write in order.
 */
import pg from 'pg';
import { indexConflict, keyExists } from '../errors.js';
import type { LogBackend, Row } from '../log/log-backend.js';
import { LogStore } from '../log/log-store.js';
import { silentLog, type LogRecord, type StoreLog } from '../types.js';
import type { AuditEvent } from '../../api/audit-event.js';
import { atRevision, auditInsert, auditRow, auditSchema } from '../audit/audit-trail.js';
import { withoutProperty } from '../scrub.js';
import { classify } from './postgres-errors.js';
import { WriteBatcher, type WriteFn } from './postgres-batch.js';
import { connection } from './postgres-connection.js';
import { PostgresLease, checkPostgresFence } from './postgres-lease.js';
import type { LeaseTiming } from '../lease.js';
import { NotificationListener } from './postgres-listener.js';

const channel = 'teamkeys_kv';
/** Advisory lock id that serializes writers (the background-work lease has its own: postgres-lease.ts). */
const writeLock = 7_315_001;

// name compares bytewise (COLLATE "C") whatever the database's locale, as key ranges assume.
const schema = `
CREATE TABLE IF NOT EXISTS kv (
  id BIGSERIAL PRIMARY KEY,
  name TEXT COLLATE "C" NOT NULL,
  created BOOLEAN NOT NULL,
  deleted BOOLEAN NOT NULL,
  prev_revision BIGINT NOT NULL,
  value TEXT NOT NULL,
  idx TEXT
);
-- An object's second index value (an access key's previous value during a rotation's overlap);
-- databases made before it gain the column.
ALTER TABLE kv ADD COLUMN IF NOT EXISTS idx2 TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS kv_name_prev_revision ON kv (name, prev_revision);
CREATE INDEX IF NOT EXISTS kv_name_id ON kv (name, id);
CREATE INDEX IF NOT EXISTS kv_idx ON kv (idx) WHERE idx IS NOT NULL;
CREATE INDEX IF NOT EXISTS kv_idx2 ON kv (idx2) WHERE idx2 IS NOT NULL;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
INSERT INTO meta (key, value) VALUES ('revision', 0), ('compact_revision', 0) ON CONFLICT (key) DO NOTHING;
${auditSchema('BIGSERIAL PRIMARY KEY')}
`;
/** Live objects' index values, unique: two access keys can never share a value, however they race. */
const uniqueSchema = `
CREATE TABLE kv_unique (idx TEXT PRIMARY KEY, name TEXT COLLATE "C" NOT NULL);
CREATE INDEX kv_unique_name ON kv_unique (name);
INSERT INTO kv_unique (idx, name)
  SELECT kv.idx, kv.name FROM kv WHERE kv.idx IS NOT NULL AND NOT kv.deleted
    AND kv.id = (SELECT MAX(k2.id) FROM kv k2 WHERE k2.name = kv.name)
  ON CONFLICT (idx) DO NOTHING;
`;

interface KvRow {
  id: string;
  name: string;
  created: boolean;
  deleted: boolean;
  prev_revision: string;
  value: string;
  prev_value?: string | null;
}


class PostgresBackend implements LogBackend {
  readonly pool: pg.Pool;
  /** The schema is in place; reset when that failed, so the next call tries again rather than failing forever. */
  private ready: Promise<void> | undefined;
  private readonly listener: NotificationListener;
  private readonly batcher: WriteBatcher;
  onNotify: () => void = () => {};

  constructor(url: string, log: StoreLog) {
    this.pool = new pg.Pool({ ...connection(url, 'teamkeys'), max: 10 });
    // An idle connection the database closed (restart, pg_terminate_backend) leaves the pool by
    // itself and must not crash the process; the next query opens a new one.
    this.pool.on('error', (err) => log.warn({ err }, 'PostgreSQL closed an idle pool connection; the next query reconnects'));
    // A connection that dies while checked out (between two queries of a transaction) emits 'error'
    // on its client, which the pool does not handle: without a listener that ends the process. The
    // query in progress, or the next one, fails on its own and the client is released as broken.
    // An idle client's error reaches the pool's handler above too: logged there only, not twice.
    const inUse = new WeakSet<pg.PoolClient>();
    this.pool.on('acquire', (client) => inUse.add(client));
    this.pool.on('release', (_err, client) => inUse.delete(client));
    this.pool.on('connect', (client) =>
      client.on('error', (err) => {
        if (inUse.has(client)) log.warn({ err }, 'PostgreSQL closed a connection in use; its transaction fails and is retried by its caller');
      }),
    );
    this.batcher = new WriteBatcher({
      connect: () => this.pool.connect().catch((err: unknown) => Promise.reject(classify(err))),
      writeLock,
      channel,
    });
    this.listener = new NotificationListener(connection(url, 'teamkeys-listener'), channel, () => this.onNotify(), log);
    void this.ensureSchema().catch(() => {});
  }

  private ensureSchema(): Promise<void> {
    this.ready ??= this.init().catch((err: unknown) => {
      this.ready = undefined;
      throw classify(err);
    });
    return this.ready;
  }

  private async init(): Promise<void> {
    const client = await this.pool.connect();
    let failed: unknown;
    try {
      // Two replicas starting together must not race on CREATE.
      await client.query('SELECT pg_advisory_lock($1)', [writeLock]);
      await client.query(schema);
      const { rows } = await client.query<{ t: string | null }>("SELECT to_regclass('kv_unique') AS t");
      if (!rows[0]?.t) await client.query(uniqueSchema);
      await client.query('SELECT pg_advisory_unlock($1)', [writeLock]);
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      // A connection that failed here may still hold the lock: it is closed, not reused.
      client.release(failed !== undefined);
    }
  }

  private async query<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
    await this.ensureSchema();
    try {
      return (await this.pool.query<T>(text, values)).rows;
    } catch (err) {
      throw classify(err);
    }
  }

  /** One serialized write, committed with the others submitted meanwhile (postgres-batch.ts); a fenced one checks its token first. */
  private async write(fn: WriteFn, fence?: number, key = ''): Promise<number | undefined> {
    await this.ensureSchema();
    if (fence === undefined) return this.batcher.submit(fn);
    return this.batcher.submit(async (c) => {
      await checkPostgresFence(c, fence, key);
      return fn(c);
    });
  }

  private static async latestIn(c: pg.PoolClient, key: string): Promise<KvRow | undefined> {
    return (await c.query<KvRow>('SELECT id, name, created, deleted, prev_revision, value FROM kv WHERE name = $1 ORDER BY id DESC LIMIT 1', [key])).rows[0];
  }

  /** Moves the key's unique index values to `index` (none, one or two), inside the write's transaction. */
  private static async claim(c: pg.PoolClient, key: string, index: readonly string[]): Promise<void> {
    if (index.length > 0) {
      const { rows } = await c.query<{ name: string }>('SELECT name FROM kv_unique WHERE idx = ANY($1::text[])', [index]);
      if (rows.some((r) => r.name !== key)) throw indexConflict(key);
    }
    await c.query('DELETE FROM kv_unique WHERE name = $1', [key]);
    for (const v of index) await c.query('INSERT INTO kv_unique (idx, name) VALUES ($1, $2)', [v, key]);
  }

  /** Appends a row and, in the same savepoint of the batch's transaction, the write's audit event. */
  private static async insert(c: pg.PoolClient, key: string, created: boolean, deleted: boolean, prev: number, value: string, index: readonly string[], audit: AuditEvent | undefined) {
    const r = await c.query<{ id: string }>(
      'INSERT INTO kv (name, created, deleted, prev_revision, value, idx, idx2) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id',
      [key, created, deleted, prev, value, index[0] ?? null, index[1] ?? null],
    );
    const id = Number(r.rows[0]!.id);
    if (audit) await c.query(auditInsert((i) => `$${i}`), auditRow(atRevision(audit, id)));
    return id;
  }

  async latest(key: string): Promise<Row | undefined> {
    const [r] = await this.query<KvRow>('SELECT id, name, deleted, value FROM kv WHERE name = $1 ORDER BY id DESC LIMIT 1', [key]);
    return r && !r.deleted ? { key, revision: Number(r.id), value: r.value } : undefined;
  }

  async create(key: string, value: string, index: readonly string[], audit?: AuditEvent, fence?: number): Promise<number> {
    const id = await this.write(async (c) => {
      const last = await PostgresBackend.latestIn(c, key);
      if (last && !last.deleted) throw keyExists(key);
      await PostgresBackend.claim(c, key, index);
      return PostgresBackend.insert(c, key, true, false, last ? Number(last.id) : 0, value, index, audit);
    }, fence, key);
    if (id === undefined) throw keyExists(key);
    return id;
  }

  update(key: string, value: string, expected: number, index: readonly string[], audit?: AuditEvent, fence?: number): Promise<number | undefined> {
    return this.write(async (c) => {
      const last = await PostgresBackend.latestIn(c, key);
      if (!last || last.deleted || Number(last.id) !== expected) return undefined;
      await PostgresBackend.claim(c, key, index);
      return PostgresBackend.insert(c, key, false, false, expected, value, index, audit);
    }, fence, key);
  }

  delete(key: string, expected: number, audit?: AuditEvent, fence?: number): Promise<number | undefined> {
    return this.write(async (c) => {
      const last = await PostgresBackend.latestIn(c, key);
      if (!last || last.deleted || Number(last.id) !== expected) return undefined;
      await PostgresBackend.claim(c, key, []);
      return PostgresBackend.insert(c, key, false, true, expected, last.value, [], audit);
    }, fence, key);
  }

  async list(start: string, end: string, after: string, revision: number, limit: number, contains?: string): Promise<Row[]> {
    // `contains`: only rows whose value holds the text (strpos, before the correlated MAX).
    const rows = await this.query<KvRow>(
      `SELECT kv.id, kv.name, kv.value FROM kv
        WHERE kv.name >= $1 AND kv.name < $2 AND kv.name > $3 AND kv.id <= $4 AND NOT kv.deleted
          AND ($6::text IS NULL OR strpos(kv.value, $6::text) > 0)
          AND kv.id = (SELECT MAX(k2.id) FROM kv k2 WHERE k2.name = kv.name AND k2.id <= $4)
        ORDER BY kv.name LIMIT $5`,
      [start, end, after, revision, limit > 0 ? limit : null, contains ?? null],
    );
    return rows.map((r) => ({ key: r.name, revision: Number(r.id), value: r.value }));
  }

  async rewriteHistory(key: string, property: string, fence?: number): Promise<void> {
    await this.write(async (c) => {
      const rows = (await c.query<KvRow>('SELECT id, deleted, value FROM kv WHERE name = $1 ORDER BY id', [key])).rows;
      const last = rows.at(-1);
      for (const r of rows) {
        const next = r === last && !r.deleted ? r.value : withoutProperty(r.value, property);
        if (next !== r.value) await c.query('UPDATE kv SET value = $1 WHERE id = $2', [next, r.id]);
      }
      return undefined; // no new revision: history is rewritten, not extended
    }, fence, key);
  }

  async findByIndex(start: string, end: string, index: string): Promise<Row[]> {
    const rows = await this.query<KvRow>(
      `SELECT kv.id, kv.name, kv.value FROM kv
        WHERE (kv.idx = $1 OR kv.idx2 = $1) AND kv.name >= $2 AND kv.name < $3 AND NOT kv.deleted
          AND kv.id = (SELECT MAX(k2.id) FROM kv k2 WHERE k2.name = kv.name)
        ORDER BY kv.name`,
      [index, start, end],
    );
    return rows.map((r) => ({ key: r.name, revision: Number(r.id), value: r.value }));
  }

  async readSince(after: number, limit: number): Promise<LogRecord[]> {
    const rows = await this.query<KvRow>(
      `SELECT kv.id, kv.name, kv.created, kv.deleted, kv.prev_revision, kv.value, p.value AS prev_value
         FROM kv LEFT JOIN kv p ON p.id = kv.prev_revision AND NOT kv.created
        WHERE kv.id > $1 ORDER BY kv.id LIMIT $2`,
      [after, limit],
    );
    return rows.map((r) => {
      const record: LogRecord = { revision: Number(r.id), key: r.name, type: r.created ? 'ADDED' : r.deleted ? 'DELETED' : 'MODIFIED', value: r.value };
      if (typeof r.prev_value === 'string') {
        record.prevValue = r.prev_value;
        record.prevRevision = Number(r.prev_revision);
      }
      return record;
    });
  }

  async currentRevision(): Promise<number> {
    const [r] = await this.query<{ value: string }>("SELECT value FROM meta WHERE key = 'revision'");
    return Number(r?.value ?? 0);
  }

  async compactedRevision(): Promise<number> {
    const [r] = await this.query<{ value: string }>("SELECT value FROM meta WHERE key = 'compact_revision'");
    return Number(r?.value ?? 0);
  }

  async compact(revision: number, fence?: number): Promise<void> {
    await this.write(async (c) => {
      const [r] = (await c.query<{ value: string }>("SELECT value FROM meta WHERE key = 'compact_revision'")).rows;
      if (revision <= Number(r?.value ?? 0)) return undefined;
      await c.query(
        `DELETE FROM kv WHERE id <= $1 AND (deleted OR EXISTS (SELECT 1 FROM kv k2 WHERE k2.name = kv.name AND k2.id > kv.id AND k2.id <= $1))`,
        [revision],
      );
      await c.query("UPDATE meta SET value = $1 WHERE key = 'compact_revision'", [revision]);
      return undefined;
    }, fence);
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.listener.close();
    await this.pool.end().catch(() => {});
  }
}

/** A Store on a PostgreSQL database that several teamkeys processes may share. */
export class PostgresStore extends LogStore {
  readonly pool: pg.Pool;
  readonly url: string;

  constructor(url: string, opts: { pollIntervalMs?: number; log?: StoreLog } = {}) {
    const log = opts.log ?? silentLog;
    const backend = new PostgresBackend(url, log);
    // NOTIFY wakes watchers at once; the poll only covers a dropped listener connection.
    super(backend, { pollIntervalMs: opts.pollIntervalMs ?? 1000, log });
    backend.onNotify = () => this.notifyWatchers();
    this.pool = backend.pool;
    this.url = url;
  }

  lease(timing?: LeaseTiming): PostgresLease {
    return new PostgresLease(this.url, timing);
  }
}
