/**
 * Group commit for PostgreSQL: the writes a process submits while its previous batch commits are
 * gathered into ONE transaction under one `pg_advisory_xact_lock` (so revisions still commit in the
 * order they are numbered, across replicas), each write in its own SAVEPOINT so that a KeyExists,
 * IndexConflict or stale revision undoes that write alone. The revision counter and the NOTIFY are
 * written once per batch, and every write is answered only after COMMIT: nothing is acknowledged
 * before it is durable. A failure of the transaction itself (a lost connection, a failed COMMIT)
 * fails every write of the batch.
 */
import type pg from 'pg';
import { StorageError } from '../errors.js';
import { classify, isConnectionError } from './postgres-errors.js';

/** One write inside the batch's transaction: the revision it appended, or undefined. */
export type WriteFn = (c: pg.PoolClient) => Promise<number | undefined>;

interface Pending {
  fn: WriteFn;
  resolve: (id: number | undefined) => void;
  reject: (err: unknown) => void;
}

export interface BatchTarget {
  /** A connection for the batch (the pool's connect, errors already classified). */
  connect(): Promise<pg.PoolClient>;
  writeLock: number;
  channel: string;
}

/** Most writes in one transaction: shares one commit among many clients, and bounds how long the lock is held. */
const maxBatch = 256;

export class WriteBatcher {
  private readonly queue: Pending[] = [];
  private running = false;

  constructor(private readonly target: BatchTarget) {}

  /** Runs fn in the next batch; resolves once that batch committed. */
  submit(fn: WriteFn): Promise<number | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ fn, resolve, reject });
      if (this.running) return;
      this.running = true;
      // Let the writes submitted in this turn of the event loop join the first batch.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) await this.commit(this.queue.splice(0, maxBatch));
    this.running = false;
  }

  /** Commits one batch and settles each of its writes; never throws. */
  private async commit(batch: Pending[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.target.connect();
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    const outcomes: ({ id: number | undefined } | { err: unknown })[] = [];
    let broken = false;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [this.target.writeLock]);
      let last: number | undefined;
      for (const w of batch) {
        await client.query('SAVEPOINT w');
        try {
          const id = await w.fn(client);
          await client.query('RELEASE SAVEPOINT w');
          if (id !== undefined) last = Math.max(last ?? 0, id);
          outcomes.push({ id });
        } catch (err) {
          if (isConnectionError(err)) throw err;
          await client.query('ROLLBACK TO SAVEPOINT w');
          await client.query('RELEASE SAVEPOINT w');
          // unique (name, prev_revision): another writer appended first, as a stale revision does.
          outcomes.push((err as { code?: string }).code === '23505' ? { id: undefined } : { err: err instanceof StorageError ? err : classify(err) });
        }
      }
      if (last !== undefined) {
        await client.query("UPDATE meta SET value = $1 WHERE key = 'revision'", [last]);
        await client.query(`SELECT pg_notify('${this.target.channel}', $1)`, [String(last)]);
      }
      await client.query('COMMIT');
    } catch (err) {
      // A connection that cannot even roll back is not handed to the next batch.
      await client.query('ROLLBACK').catch(() => (broken = true));
      if (isConnectionError(err)) broken = true;
      // A lost connection may have lost the COMMIT's answer too: like etcd's, the outcome is then unknown.
      const failure = err instanceof StorageError ? err : classify(err);
      for (const w of batch) w.reject(failure);
      return;
    } finally {
      client.release(broken);
    }
    batch.forEach((w, i) => {
      const o = outcomes[i]!;
      if ('err' in o) w.reject(o.err);
      else w.resolve(o.id);
    });
  }
}
