/**
 * The background-work lease of processes sharing one SQLite file (several `teamkeys serve` on one
 * file, which is supported): a row in the file's `lease` table naming the holder and when its
 * hold expires, taken and renewed in BEGIN IMMEDIATE transactions, as kube's Lease objects and
 * client-go's leader election do it. The holder renews well before expiry; a holder that dies
 * stops renewing and another process takes the lease once it expired; one that stops releases it
 * at once. A holder that could not renew in time (its process stalled past the expiry) has lost
 * it and says so, since another may have taken it meanwhile.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import Database from 'better-sqlite3';
import { StorageError } from '../errors.js';
import type { Lease } from '../lease.js';

const schema = 'CREATE TABLE IF NOT EXISTS lease (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL)';
const leaseName = 'background-work';

export interface SqliteLeaseOptions {
  /** How long a hold lasts without renewal (default 15 s): the longest another process waits after the holder died. */
  ttlMs?: number;
  /** How often the holder renews (default a fifth of ttlMs). */
  renewMs?: number;
}

export class SqliteLease implements Lease {
  /** Who holds it, as the row names it: host, process and a random part (a pid is reused). */
  readonly holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private db: Database.Database | undefined;
  private heldUntil = 0;
  private renewal: NodeJS.Timeout | undefined;
  private lost: () => void = () => {};
  private readonly ttlMs: number;
  private readonly renewMs: number;

  constructor(
    private readonly path: string,
    opts: SqliteLeaseOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 15_000;
    this.renewMs = opts.renewMs ?? Math.floor(this.ttlMs / 5);
  }

  /** Its own connection, as the PostgreSQL lease has: a short busy timeout, since it runs on the event loop. */
  private connection(): Database.Database {
    if (!this.db) {
      const db = new Database(this.path);
      db.pragma('busy_timeout = 1000');
      db.exec(schema);
      this.db = db;
    }
    return this.db;
  }

  /** Takes (or renews) the lease when it is free, expired or ours; false when another holds it. */
  private claim(): boolean {
    const db = this.connection();
    const now = Date.now();
    return db
      .transaction(() => {
        const row = db.prepare<[string], { holder: string; expires_at: number }>('SELECT holder, expires_at FROM lease WHERE name = ?').get(leaseName);
        if (row && row.holder !== this.holder && row.expires_at > now) return false;
        db.prepare('INSERT INTO lease (name, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at').run(leaseName, this.holder, now + this.ttlMs);
        this.heldUntil = now + this.ttlMs;
        return true;
      })
      .immediate();
  }

  /** Throws a StorageError Unreachable when the file stayed locked (the leader logs it and retries). */
  async tryAcquire(): Promise<boolean> {
    if (this.renewal) return true;
    let took: boolean;
    try {
      took = this.claim();
    } catch (err) {
      throw new StorageError('Unreachable', '', `could not take the background-work lease in ${this.path}: ${(err as Error).message}`);
    }
    if (!took) return false;
    this.renewal = setInterval(() => this.renew(), this.renewMs);
    this.renewal.unref();
    return true;
  }

  private renew(): void {
    let kept = false;
    try {
      kept = this.claim();
    } catch {
      // Locked for a moment: tried again at the next tick, unless the hold runs out first.
      if (Date.now() < this.heldUntil - this.renewMs) return;
    }
    if (kept) return;
    clearInterval(this.renewal);
    this.renewal = undefined;
    this.lost();
  }

  onLost(callback: () => void): void {
    this.lost = callback;
  }

  async release(): Promise<void> {
    clearInterval(this.renewal);
    this.renewal = undefined;
    try {
      this.db?.prepare('DELETE FROM lease WHERE name = ? AND holder = ?').run(leaseName, this.holder);
    } catch {
      // Locked or gone: the row expires on its own.
    }
    this.db?.close();
    this.db = undefined;
  }
}
