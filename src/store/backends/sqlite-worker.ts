/**
 * A worker thread holding one SQLite connection of the store (sqlite-threads.ts starts it).
 *
 * The writer commits group-wise: the requests that arrived while the previous commit ran (one
 * event-loop turn's messages, at most maxBatch) go into ONE `BEGIN IMMEDIATE ... COMMIT`, hence one
 * fsync of the WAL under synchronous=FULL. Each write runs in its own savepoint (better-sqlite3's
 * nested transactions), so a KeyExists, IndexConflict or stale revision undoes that write alone.
 * Every reply is posted only after COMMIT returned: nothing is acknowledged before it is durable.
 * If the batch as a whole fails (the lock stayed held past busy_timeout, an I/O error), every
 * write of it fails and none is acknowledged.
 *
 * The reader answers reads on a connection of its own: in WAL mode a reader never waits for the
 * write lock, so reads go on while the writer waits for a lock another process holds.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AuditEvent, AuditFilter } from '../../api/audit-event.js';
import { sqliteAuditStatements } from '../audit/sqlite-audit-trail.js';
import { SqliteBackend, busyAsUnreachable, defaultBusyTimeoutMs } from './sqlite-backend.js';
import { errorData, type Reply, type Request, type WorkerConfig } from './sqlite-messages.js';

const config = workerData as WorkerConfig;
const port = parentPort!;
const backend = new SqliteBackend(config.path, { ...config, init: false });
const audit = sqliteAuditStatements(backend.db);
const busyTimeoutMs = config.busyTimeoutMs ?? defaultBusyTimeoutMs;

type Handler = (...args: never[]) => unknown;

/** Writes, run inside a batch's transaction: each is one savepoint. */
const writes: Record<string, Handler> = {
  create: (key: string, value: string, index: readonly string[], audit?: AuditEvent, fence?: number) => backend.create(key, value, index, audit, fence),
  update: (key: string, value: string, expected: number, index: readonly string[], audit?: AuditEvent, fence?: number) => backend.update(key, value, expected, index, audit, fence),
  delete: (key: string, expected: number, audit?: AuditEvent, fence?: number) => backend.delete(key, expected, audit, fence),
  rewriteHistory: (key: string, property: string, fence?: number) => backend.rewriteHistory(key, property, fence),
  compact: (revision: number, fence?: number) => backend.compact(revision, fence),
  probeWrite: () => backend.probeWrite(),
  auditAppend: (events: AuditEvent[]) => audit.append(events),
  auditTrim: (beforeIso: string) => audit.trim(beforeIso),
};

/** Requests answered at once, outside any batch. */
const direct: Record<string, Handler> = {
  latest: (key: string) => backend.latest(key),
  list: (start: string, end: string, after: string, revision: number, limit: number, contains?: string) => backend.list(start, end, after, revision, limit, contains),
  findByIndex: (start: string, end: string, index: string) => backend.findByIndex(start, end, index),
  readSince: (after: number, limit: number) => backend.readSince(after, limit),
  auditList: (filter: AuditFilter) => audit.list(filter),
  auditInit: () => audit.init(),
  durability: () => backend.durability(),
};

function answer(id: number, run: () => unknown): Reply {
  try {
    return { id, value: run() };
  } catch (err) {
    return { id, error: errorData(err) };
  }
}

/** Commits the batch in one transaction; the replies, all posted after COMMIT. */
function commit(batch: Request[]): Reply[] {
  const replies: Reply[] = [];
  try {
    backend.db
      .transaction(() => {
        for (const req of batch) {
          try {
            replies.push({ id: req.id, value: (writes[req.op] as (...a: unknown[]) => unknown)(...req.args) });
          } catch (err) {
            // SQLite itself rolled the whole transaction back (a full disk, an I/O error): the
            // writes before this one are gone too, so the batch fails as a whole.
            if (!backend.db.inTransaction) throw err;
            replies.push({ id: req.id, error: errorData(err) });
          }
        }
      })
      .immediate();
    return replies;
  } catch (err) {
    const error = errorData(busyAsUnreachable(err, busyTimeoutMs));
    return batch.map((req) => ({ id: req.id, error }));
  }
}

const queue: Request[] = [];
let scheduled = false;

/** How often the writer looks whether the WAL outgrew its limit (sqlite-backend.ts truncateWal). */
const walCheckMs = 1000;
if (config.role === 'writer') {
  // Between batches: a WAL grown behind a long reader is truncated once no reader needs it.
  setInterval(() => queue.length === 0 && backend.truncateWal(), walCheckMs);
}

/** Commits what has queued up, a batch at a time; messages arriving meanwhile form the next batch. */
function flush(): void {
  scheduled = false;
  const batch = queue.splice(0, config.maxBatch);
  if (batch.length > 0) for (const reply of commit(batch)) port.postMessage(reply);
  if (queue.length > 0) schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  // setImmediate runs after this turn has delivered every message already waiting on the port.
  setImmediate(flush);
}

port.on('message', (req: Request) => {
  if (req.op === 'close') {
    while (queue.length > 0) flush();
    backend.close();
    port.postMessage({ id: req.id, value: undefined } satisfies Reply);
    port.close();
    return;
  }
  if (config.role === 'writer' && req.op in writes) {
    queue.push(req);
    schedule();
    return;
  }
  const handler = direct[req.op];
  port.postMessage(handler ? answer(req.id, () => (handler as (...a: unknown[]) => unknown)(...req.args)) : { id: req.id, error: { message: `unknown request ${req.op}` } });
});
