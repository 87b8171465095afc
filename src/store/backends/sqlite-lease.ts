/**
 * The background-work lease of processes sharing one SQLite file (several `teamkeys serve` on one
 * file, which is supported): a row in the file's `lease` table naming the holder, when its hold
 * expires and its fencing token, taken and renewed in BEGIN IMMEDIATE transactions, as kube's
 * Lease objects and client-go's leader election do it. The holder renews well before expiry; a
 * holder that dies stops renewing and another process takes the lease once it expired (and
 * raises the token); one that stops releases it at once. A holder whose renewal is overdue has
 * lost it (lease.ts), and its writes carrying the old token are refused (checkSqliteFence).
 *
 * It runs on the event loop, so it never waits for the file's write lock: busy_timeout is 0, and
 * a renewal that finds the file locked (another process writing, this one's writer thread
 * committing) tries again a moment later, until its deadline.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import Database from 'better-sqlite3';
import { StorageError } from '../errors.js';
import { fenced } from '../fence.js';
import { RenewedLease, type LeaseTiming } from '../lease.js';

const schema = 'CREATE TABLE IF NOT EXISTS lease (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL, token INTEGER NOT NULL DEFAULT 0)';
const leaseName = 'background-work';

type LeaseRow = { holder: string; expires_at: number; token: number };

export type SqliteLeaseOptions = LeaseTiming;

/** How long a renewal waits before trying a locked file again. */
const lockedRetryMs = 25;

export class SqliteLease extends RenewedLease {
  /** Who holds it, as the row names it: host, process and a random part (a pid is reused). */
  readonly holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private db: Database.Database | undefined;

  constructor(
    private readonly path: string,
    opts: SqliteLeaseOptions = {},
  ) {
    super(opts);
  }

  /** Its own connection, as the PostgreSQL lease has, that never waits for a lock (it runs on the event loop). */
  private connection(): Database.Database {
    if (!this.db) {
      const db = new Database(this.path);
      db.pragma('busy_timeout = 0');
      try {
        db.exec(schema);
        // Files whose lease row predates fencing gain its token.
        if (!db.prepare<[], { name: string }>('PRAGMA table_info(lease)').all().some((c) => c.name === 'token')) {
          db.exec('ALTER TABLE lease ADD COLUMN token INTEGER NOT NULL DEFAULT 0');
        }
      } catch (err) {
        db.close();
        throw err;
      }
      this.db = db;
    }
    return this.db;
  }

  /**
   * Takes or renews the lease in one transaction: its token when it was free, expired or ours
   * (a new hold raises the token, a renewal of `renewing` keeps it), undefined when another holds it.
   */
  private claim(renewing: number | undefined): number | undefined {
    const db = this.connection();
    const now = Date.now();
    return db
      .transaction(() => {
        const row = db.prepare<[string], LeaseRow>('SELECT holder, expires_at, token FROM lease WHERE name = ?').get(leaseName);
        const ours = row?.holder === this.holder && row.token === renewing;
        if (row && !ours && row.expires_at > now) return undefined;
        if (renewing !== undefined && !ours) return undefined; // the hold ran out and changed hands meanwhile
        const token = ours ? row.token : (row?.token ?? 0) + 1;
        db.prepare('INSERT INTO lease (name, holder, expires_at, token) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, token = excluded.token').run(leaseName, this.holder, now + this.ttlMs, token);
        return token;
      })
      .immediate();
  }

  /** Throws a StorageError Unreachable when the file is locked (the leader logs it and retries). */
  protected async take(): Promise<number | undefined> {
    try {
      return this.claim(undefined);
    } catch (err) {
      throw new StorageError('Unreachable', '', `could not take the background-work lease in ${this.path}: ${(err as Error).message}`);
    }
  }

  protected async extend(token: number): Promise<boolean> {
    for (;;) {
      try {
        return this.claim(token) === token;
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY' || !this.valid()) throw err;
      }
      await new Promise((r) => setTimeout(r, lockedRetryMs));
    }
  }

  protected async drop(): Promise<void> {
    try {
      // Expired at once rather than deleted: the row keeps the token, which must only grow.
      this.db?.prepare('UPDATE lease SET expires_at = 0 WHERE name = ? AND holder = ?').run(leaseName, this.holder);
    } catch {
      // Locked or gone: the row expires on its own.
    }
    this.db?.close();
    this.db = undefined;
  }
}

const fenceReads = new WeakMap<Database.Database, Database.Statement<[string], { token: number }>>();

/**
 * Refuses a background write whose fencing token is not the lease row's, inside the write's own
 * transaction (the lease row is in the same file, so no other holder can take it meanwhile).
 */
export function checkSqliteFence(db: Database.Database, token: number, key: string): void {
  let read = fenceReads.get(db);
  if (!read) fenceReads.set(db, (read = db.prepare<[string], { token: number }>('SELECT token FROM lease WHERE name = ?')));
  const row = read.get(leaseName);
  if (row?.token !== token) throw fenced(key, token, row?.token);
}
