/**
 * The main-thread side of the SQLite store in worker threads (`teamkeys serve`): writes go to the
 * writer thread, which commits them group-wise (sqlite-worker.ts); reads that reach the backend go
 * to the reader thread; so neither a commit's fsync nor another process's write lock ever blocks
 * the event loop. currentRevision, compactedRevision and ping stay on a main-thread connection:
 * each is one indexed single-row read, and in WAL mode a reader never waits for the write lock
 * (it reads the last committed snapshot), so they stay cheap and never stall behind a writer.
 */
import { Worker } from 'node:worker_threads';
import { packageFile } from '../../package-files.js';
import { StorageError, isStorageError } from '../errors.js';
import type { LogBackend, Row } from '../log/log-backend.js';
import type { LogRecord, StoreLog } from '../types.js';
import type { AuditEvent, AuditFilter } from '../../api/audit-event.js';
import { SqliteBackend, type SqliteOptions } from './sqlite-backend.js';
import { rebuildError, type Reply, type WorkerConfig } from './sqlite-messages.js';

/** Most writes in one commit: enough to share one fsync among every concurrent client, small enough to keep one commit short. */
const maxBatch = 256;

const closed = (): StorageError => new StorageError('Closed', '', 'the store is closed');

/**
 * Each thread's young generation, in MiB (two semi-spaces of 2 MiB and V8's young large-object
 * space). V8's default grows it to 48 MiB under the allocation of a cache fill (every row read and
 * posted), and a grown young generation stays resident after: 5-12 MiB of the server's RSS at
 * 100,000 keys (docs/performance.md, "Memory, fifth pass"). The threads keep nothing of their own
 * but SQLite's statements, so a scavenge of 2 MiB is cheap; durable creates were no slower with it.
 */
const resourceLimits = { maxYoungGenerationSizeMb: 6 };

/**
 * Starts the worker's module: built JavaScript beside this file, or, when this file runs from its
 * TypeScript source (tests, tsx), that source behind tsx's loader, registered inside the thread.
 */
function startWorker(config: WorkerConfig): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(packageFile('dist/store/backends/sqlite-worker.js'), { workerData: config, resourceLimits });
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./sqlite-worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, workerData: config, resourceLimits });
}

/** A thread that lived this long before it failed is restarted at once; one failing sooner, after a growing pause. */
const stableMs = 30_000;
const restartPauseMs = { first: 100, max: 5_000 };

/**
 * One worker thread and the requests waiting for its replies. A thread that dies (a bug, an
 * out-of-memory in its isolate) fails the requests it held with Unreachable (503, which clients
 * retry; a write among them may or may not have committed, as with a dropped database
 * connection) and is started again, so the server recovers without a restart of its own.
 */
export class SqliteThread {
  private worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  /** Why requests are refused: the thread is down until its restart, or Closed for good. */
  private failure: Error | undefined;
  private startedAt = 0;
  private quickFailures = 0;
  private restart: NodeJS.Timeout | undefined;
  /** Set once close was asked: the thread's exit from then on is the one asked for. */
  private closing: Promise<void> | undefined;

  constructor(
    private readonly config: WorkerConfig,
    private readonly log: StoreLog,
  ) {
    this.worker = this.start();
  }

  private start(): Worker {
    const worker = startWorker(this.config);
    this.startedAt = Date.now();
    // An idle thread does not keep the process alive; one with requests in flight does.
    worker.unref();
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (err) => this.down(worker, err));
    worker.on('exit', (code) => this.down(worker, new Error(`the SQLite ${this.config.role} thread exited (code ${code})`)));
    return worker;
  }

  /** Sends a request; resolves with the worker's answer, rejects with the error it reported. */
  call<T>(op: string, ...args: unknown[]): Promise<T> {
    if (this.closing) return Promise.reject(closed());
    return this.send(op, args);
  }

  private send<T>(op: string, args: unknown[]): Promise<T> {
    if (this.failure) return Promise.reject(this.unreachable());
    const id = this.nextId++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, op, args });
    });
  }

  /** Throws Unreachable once the thread has failed (or Closed once closed). */
  assertAlive(): void {
    if (this.failure) throw this.unreachable();
  }

  /**
   * Lets queued requests finish, closes the connection and ends the thread. From here on the
   * thread's exit is expected: it is neither an error nor restarted (a shutdown under load once
   * logged `the SQLite writer thread exited (code 0)` at error, restarted it, and hung to the forced exit).
   */
  close(): Promise<void> {
    this.closing ??= this.closeThread();
    return this.closing;
  }

  private async closeThread(): Promise<void> {
    clearTimeout(this.restart);
    // Down: no connection to close. Up: its reply may come after it exited, which is fine too.
    if (!this.failure) await this.send('close', []).catch(() => {});
    this.failure = closed();
    await this.worker.terminate();
  }

  private settle(reply: Reply): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if ('error' in reply) waiter.reject(rebuildError(reply.error));
    else waiter.resolve(reply.value);
  }

  /** The thread failed, or ended after close (its 'error' and 'exit' both come here; once counts). */
  private down(worker: Worker, err: Error): void {
    if (worker !== this.worker || isStorageError(this.failure, 'Closed')) return;
    if (this.closing) {
      this.failure = closed();
      for (const waiter of this.pending.values()) waiter.reject(closed());
      this.pending.clear();
      return;
    }
    if (this.failure) return;
    this.failure = err;
    for (const waiter of this.pending.values()) waiter.reject(this.unreachable());
    this.pending.clear();
    this.quickFailures = Date.now() - this.startedAt < stableMs ? this.quickFailures + 1 : 0;
    const pause = this.quickFailures === 0 ? 0 : Math.min(restartPauseMs.max, restartPauseMs.first * 2 ** (this.quickFailures - 1));
    this.log.error({ err, restartInMs: pause }, `the SQLite ${this.config.role} thread failed; its requests get 503 until it is restarted`);
    this.restart = setTimeout(() => {
      this.restart = undefined;
      this.worker = this.start();
      this.failure = undefined;
      this.log.info({}, `the SQLite ${this.config.role} thread was restarted`);
    }, pause);
    this.restart.unref();
  }

  private unreachable(): StorageError {
    return this.failure instanceof StorageError ? this.failure : new StorageError('Unreachable', '', `SQLite is unavailable: ${this.failure?.message}`);
  }
}

/** A LogBackend whose SQLite work runs in two worker threads. */
export class ThreadedSqliteBackend implements LogBackend {
  readonly writer: SqliteThread;
  readonly reader: SqliteThread;

  constructor(
    path: string,
    opts: SqliteOptions,
    /** The main thread's connection: it created the schema, and answers the cheap reads. */
    private readonly main: SqliteBackend,
    log: StoreLog,
  ) {
    // Only data crosses to a thread: the settings are picked, not spread (opts may carry a logger).
    const settings: SqliteOptions = {
      ...(opts.synchronous ? { synchronous: opts.synchronous } : {}),
      ...(opts.busyTimeoutMs !== undefined ? { busyTimeoutMs: opts.busyTimeoutMs } : {}),
    };
    this.writer = new SqliteThread({ ...settings, path, role: 'writer', maxBatch }, log);
    this.reader = new SqliteThread({ ...settings, path, role: 'reader', maxBatch }, log);
  }

  latest(key: string): Promise<Row | undefined> {
    return this.reader.call('latest', key);
  }

  create(key: string, value: string, index: readonly string[], audit?: AuditEvent, fence?: number): Promise<number> {
    return this.writer.call('create', key, value, index, audit, fence);
  }

  update(key: string, value: string, expected: number, index: readonly string[], audit?: AuditEvent, fence?: number): Promise<number | undefined> {
    return this.writer.call('update', key, value, expected, index, audit, fence);
  }

  delete(key: string, expected: number, audit?: AuditEvent, fence?: number): Promise<number | undefined> {
    return this.writer.call('delete', key, expected, audit, fence);
  }

  list(start: string, end: string, after: string, revision: number, limit: number, contains?: string): Promise<Row[]> {
    return this.reader.call('list', start, end, after, revision, limit, contains);
  }

  rewriteHistory(key: string, property: string, fence?: number): Promise<void> {
    return this.writer.call('rewriteHistory', key, property, fence);
  }

  findByIndex(start: string, end: string, index: string): Promise<Row[]> {
    return this.reader.call('findByIndex', start, end, index);
  }

  readSince(after: number, limit: number): Promise<LogRecord[]> {
    return this.reader.call('readSince', after, limit);
  }

  currentRevision(): number {
    return this.main.currentRevision();
  }

  compactedRevision(): number {
    return this.main.compactedRevision();
  }

  compact(revision: number, fence?: number): Promise<void> {
    return this.writer.call('compact', revision, fence);
  }

  /** The file answers, and so do both threads: /readyz fails rather than hide a thread that died. */
  ping(): void {
    this.writer.assertAlive();
    this.reader.assertAlive();
    this.main.ping();
  }

  probeWrite(): Promise<void> {
    return this.writer.call('probeWrite');
  }

  durability(): Promise<{ journalMode: string; synchronous: string }> {
    return this.writer.call('durability');
  }

  /** The audit trail's requests: appends and trims are writes (batched like the rest), listing is a read. */
  audit = {
    init: (): Promise<void> => this.writer.call('auditInit'),
    append: (events: AuditEvent[]): Promise<void> => this.writer.call('auditAppend', events),
    list: (filter: AuditFilter): Promise<AuditEvent[]> => this.reader.call('auditList', filter),
    trim: (beforeIso: string): Promise<number> => this.writer.call('auditTrim', beforeIso),
  };

  async close(): Promise<void> {
    await Promise.all([this.writer.close(), this.reader.close()]);
    this.main.close();
  }
}
