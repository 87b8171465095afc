/**
 * A PostgreSQL outage while writes run loses no audit event: every create answered 201 has its
 * event in the trail afterwards, because the event is stored in the write's own transaction.
 *
 * The outage is made to fall between a write and its event as it would under load: before the
 * database stops, another session holds the audit table's lock for a moment (as a slow audit
 * insert behind a long trim would), so a write that stored its event separately, after answering,
 * is answered while its event waits, and the event dies with the database. A write that stores
 * its event with itself waits too, and is never answered 201.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from '../support/serve-process.js';
import { eventually } from '../support/eventually.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

const adminKey = `AuditOutage${'a'.repeat(53)}`;

describe('audit events across a PostgreSQL outage', () => {
  let server: PostgresServer;
  let db: string;
  let served: Served;
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${served.url}${path}`, { ...init, signal: AbortSignal.timeout(20_000), headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${adminKey}` } });

  beforeAll(async () => {
    server = await startPostgres();
    db = await server.database();
    served = await startServe(['--store', db, '--insecure-http'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
  }, 60_000);
  afterAll(async () => {
    await served?.stop();
    server?.stop();
  });

  it('every create answered 201 while the database stopped and started again has its audit event', async () => {
    const acknowledged: string[] = [];
    const statuses = new Map<number, number>();
    let running = true;
    let sent = 0;
    // Four clients write one after another, as fast as they are answered, until told to stop (or 2,000 writes).
    const writer = async (w: number) => {
      for (let n = 0; running && sent < 2000; n++) {
        sent++;
        const name = `w${w}-${n}`;
        const status = await call('/apis/management.service/v1/teams', { method: 'POST', body: JSON.stringify({ metadata: { name } }) }).then(
          (r) => r.status,
          () => 0,
        );
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 201) acknowledged.push(name);
        if (status !== 201) await new Promise((r) => setTimeout(r, 50));
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await eventually('writes are being acknowledged', () => acknowledged.length >= 20, 20_000);

    const holder = new pg.Client({ connectionString: db });
    holder.on('error', () => {}); // killed by the stop below
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE audit_events IN ACCESS EXCLUSIVE MODE');
    const beforeStop = acknowledged.length;
    await new Promise((r) => setTimeout(r, 500)); // writes meet the lock
    server.halt();
    await new Promise((r) => setTimeout(r, 1000)); // writes meet the outage
    server.resume();
    const resumedAt = acknowledged.length;
    await eventually('writes are acknowledged again after the outage', () => acknowledged.length >= resumedAt + 20, 30_000);
    running = false;
    await Promise.all(writers);
    process.stdout.write(`audit outage: ${acknowledged.length} acknowledged creates (${resumedAt - beforeStop} while the audit table was locked or the database stopping), answers ${JSON.stringify(Object.fromEntries(statuses))}\n`);
    // The outage was real: some writes were refused with 503 rather than answered.
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0);

    const res = await call('/apis/audit.management.service/v1/events?resource=teams&limit=5000');
    expect(res.status).toBe(200);
    const events = ((await res.json()) as { items: { verb: string; objectRef: { name: string } }[] }).items;
    const audited = new Set(events.filter((e) => e.verb === 'create').map((e) => e.objectRef.name));
    expect(acknowledged.filter((name) => !audited.has(name))).toEqual([]);
  }, 120_000);
});
