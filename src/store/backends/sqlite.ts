/**
 * The embedded default backend: one SQLite file in WAL mode (sqlite-backend.ts). Several processes
 * may share the file; each one's watchers poll the log for the others' rows. `teamkeys serve` runs
 * the connections that write and read in worker threads with group commit (sqlite-threads.ts); the
 * CLI's embedded commands, which start, write a little and exit, keep one in-thread connection.
 */
import { LogStore } from '../log/log-store.js';
import { silentLog, type StoreLog } from '../types.js';
import { SqliteBackend, type SqliteOptions } from './sqlite-backend.js';
import { ThreadedSqliteBackend } from './sqlite-threads.js';
import { SqliteLease } from './sqlite-lease.js';
import { SqliteGuard } from './sqlite-guard.js';
import { LocalLease, type Lease, type LeaseTiming } from '../lease.js';

export type { SqliteOptions } from './sqlite-backend.js';

export interface SqliteStoreOptions extends SqliteOptions {
  pollIntervalMs?: number;
  /** Hears of the store's own trouble (the log tail failing, a worker thread dying). */
  log?: StoreLog;
  /**
   * Writes (committed in batches, one fsync each) and reads in worker threads, so that neither an
   * fsync nor a write lock held by another process stalls the event loop. For long-running servers.
   */
  threads?: boolean;
  /** How often the file's identity is checked (sqlite-ground.ts); tests shorten it. */
  groundCheckMs?: number;
}

/** A Store in one SQLite file that acknowledges a write only once it is durable. */
export class SqliteStore extends LogStore {
  private readonly sqlite: SqliteBackend;
  /** The worker threads' side of the backend, when the store runs in threads. */
  readonly threaded: ThreadedSqliteBackend | undefined;

  constructor(
    /** The database file (the audit trail keeps its table in it too). */
    readonly path: string,
    opts: SqliteStoreOptions = {},
  ) {
    // The main thread's connection is opened first, synchronously: it creates or upgrades the
    // schema (and refuses a file system without WAL) before anything else touches the file.
    const main = new SqliteBackend(path, opts);
    const log = opts.log ?? silentLog;
    const threaded = opts.threads && path !== ':memory:' ? new ThreadedSqliteBackend(path, opts, main, log) : undefined;
    // A file removed or replaced under the server, or a disk that refuses writes, is a 503 and an unready /readyz (sqlite-guard.ts).
    const backend = path === ':memory:' ? main : new SqliteGuard(threaded ?? main, path, log, opts.groundCheckMs);
    super(backend, { pollIntervalMs: opts.pollIntervalMs ?? 200, log });
    this.sqlite = main;
    this.threaded = threaded;
  }

  /** The lease on background work among the processes sharing this file (for a file only this process opens, it is simply always won). */
  lease(timing?: LeaseTiming): Lease {
    return this.path === ':memory:' ? new LocalLease() : new SqliteLease(this.path, timing);
  }

  /** journal_mode and synchronous read back from the connection that writes: what a write's acknowledgement rests on. */
  async durability(): Promise<{ journalMode: string; synchronous: string }> {
    return this.threaded ? this.threaded.durability() : this.sqlite.durability();
  }
}
