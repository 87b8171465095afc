/**
 * The background-work lease of replicas sharing one PostgreSQL database: a session-level advisory
 * lock on a connection of its own, renewed over that same connection (lease.ts), and a fencing
 * token in the `teamkeys_lease` table that the holder raises each time it takes the lock.
 *
 * The session runs with idle_session_timeout = ttl, so the database itself ends a session that
 * sent nothing for ttl and frees the lock: a holder that is paused or cut off (its side of the
 * connection still open, as a stalled network or a dead NAT entry leaves it) loses the lock
 * within ttl of its last renewal, and counts it lost on its own clock before then. A session
 * ended by other means (pg_terminate_backend, a restart) frees the lock at once, before the
 * holder can know: its writes then carry a stale token and are refused (checkPostgresFence).
 */
import type { Socket } from 'node:net';
import pg from 'pg';
import { fenced } from '../fence.js';
import { RenewedLease, type LeaseTiming } from '../lease.js';
import { connection } from './postgres-connection.js';
import { classify } from './postgres-errors.js';

const leaseLock = 7_315_002;
const leaseName = 'background-work';
const tokenSchema = 'CREATE TABLE IF NOT EXISTS teamkeys_lease (name TEXT PRIMARY KEY, token BIGINT NOT NULL)';
/** Still ours: the lock held by this very session, and the token not raised by another. */
const stillHeld = `SELECT (SELECT token FROM teamkeys_lease WHERE name = $1) AS token,
  EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND classid = 0 AND objid = $2::int::oid AND objsubid = 1 AND granted) AS locked`;

export class PostgresLease extends RenewedLease {
  private client: pg.Client | undefined;

  constructor(
    private readonly url: string,
    timing: LeaseTiming = {},
  ) {
    super(timing);
  }

  /** Throws a StorageError Unreachable when the database cannot be reached (the leader logs it and retries). */
  protected async take(): Promise<number | undefined> {
    // A query that gets no answer (a stalled network) fails after ttl rather than holding the leader's attempt forever.
    const client = new pg.Client({ ...connection(this.url, 'teamkeys-lease'), query_timeout: this.ttlMs });
    client.on('error', () => {}); // followed by 'end', which reports the loss
    let token: number;
    try {
      await client.connect();
      await client.query(`SET idle_session_timeout = ${Math.ceil(this.ttlMs)}`).catch((err: unknown) => {
        // PostgreSQL before 14 has no such setting (42704): the lease works, but a paused holder keeps the lock until TCP keepalive gives up.
        if ((err as { code?: string }).code !== '42704') throw err;
      });
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [leaseLock]);
      if (!rows[0]?.ok) {
        await client.end();
        return undefined;
      }
      await client.query(tokenSchema);
      const raised = await client.query<{ token: string }>(
        'INSERT INTO teamkeys_lease (name, token) VALUES ($1, 1) ON CONFLICT (name) DO UPDATE SET token = teamkeys_lease.token + 1 RETURNING token',
        [leaseName],
      );
      token = Number(raised.rows[0]!.token);
    } catch (err) {
      destroy(client);
      throw classify(err);
    }
    client.on('end', () => {
      if (this.client === client) this.lose('its connection to PostgreSQL closed');
    });
    this.client = client;
    return token;
  }

  protected async extend(token: number): Promise<boolean> {
    const client = this.client;
    if (!client) return false;
    const { rows } = await client.query<{ token: string | null; locked: boolean }>(stillHeld, [leaseName, leaseLock]);
    return rows[0]?.locked === true && Number(rows[0].token) === token;
  }

  protected async drop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    // Not end(): on a connection cut off it would wait for an answer that never comes.
    if (client) destroy(client);
  }
}

/** Closes the client's socket at once (the database frees the lock when it sees the close). */
function destroy(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: Socket } }).connection?.stream?.destroy();
  void client.end().catch(() => {});
}

/**
 * Refuses a background write whose fencing token is not the lease's, inside the write's own
 * transaction: FOR SHARE makes a new holder's raise of the token wait for the write's commit, so
 * a write either commits before the lease changed hands or sees the new token.
 */
export async function checkPostgresFence(c: pg.PoolClient, token: number, key: string): Promise<void> {
  const { rows } = await c.query<{ token: string }>('SELECT token FROM teamkeys_lease WHERE name = $1 FOR SHARE', [leaseName]);
  const current = rows[0] ? Number(rows[0].token) : undefined;
  if (current !== token) throw fenced(key, token, current);
}
