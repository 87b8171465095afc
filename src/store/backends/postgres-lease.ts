/** The background-work lease of replicas sharing one PostgreSQL database. */
import pg from 'pg';
import type { Lease } from '../lease.js';
import { connection } from './postgres-connection.js';
import { classify } from './postgres-errors.js';

const leaseLock = 7_315_002;

/**
 * The background-work lease: a session-level advisory lock on a connection of its own. When the
 * holder dies its connection closes and PostgreSQL frees the lock for the next replica.
 */
export class PostgresLease implements Lease {
  private client: pg.Client | undefined;
  private lost: () => void = () => {};

  constructor(private readonly url: string) {}

  /** Throws a StorageError Unreachable when the database cannot be reached (the leader logs it and retries). */
  async tryAcquire(): Promise<boolean> {
    if (this.client) return true;
    const client = new pg.Client(connection(this.url, 'teamkeys-lease'));
    client.on('error', () => {}); // followed by 'end', which reports the loss
    try {
      await client.connect();
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [leaseLock]);
      if (!rows[0]?.ok) {
        await client.end();
        return false;
      }
    } catch (err) {
      await client.end().catch(() => {});
      throw classify(err);
    }
    client.on('end', () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.lost();
    });
    this.client = client;
    return true;
  }

  onLost(callback: () => void): void {
    this.lost = callback;
  }

  async release(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
