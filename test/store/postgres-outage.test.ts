/**
 * A PostgreSQL outage under two serving replicas heals by itself: during it every verb is a 503
 * with Retry-After (not a 500), after it writes succeed within seconds, watches (open across the
 * outage, or opened after) see every write once and in order, and the background lease is taken
 * again. The LISTEN connection killed from the database side comes back and loses nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from '../server/serve-process.js';
import { eventually } from '../support/eventually.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

const adminKey = `Outage${'o'.repeat(58)}`;
const leaseLine = 'acquired the background-work lease';

interface Collected {
  events: { type: string; name: string; rv: number }[];
  stop(): void;
}

/** Reads a watch response in the background, keeping each event's type, name and resourceVersion. */
function collect(res: Response, ac: AbortController): Collected {
  const events: Collected['events'] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const e = JSON.parse(buffer.slice(0, nl)) as { type: string; object: { metadata: { name?: string; resourceVersion?: string } } };
          events.push({ type: e.type, name: e.object.metadata.name ?? '', rv: Number(e.object.metadata.resourceVersion) });
          buffer = buffer.slice(nl + 1);
        }
      }
    } catch {
      // aborted at the end of the test
    }
  })();
  return { events, stop: () => ac.abort() };
}

describe('PostgreSQL outages under two serving replicas', () => {
  let pg: PostgresServer;
  let db: string;
  let a: Served;
  let b: Served;
  const api = (s: Served) => `${s.url}/apis/management.service/v1`;
  const call = (s: Served, path: string, init: RequestInit = {}) =>
    fetch(`${api(s)}${path}`, { ...init, headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${adminKey}`, ...(init.headers as Record<string, string>) } });
  const watch = async (s: Served, rv: string) => {
    const ac = new AbortController();
    const res = await call(s, `/teams?watch=true&resourceVersion=${rv}`, { signal: ac.signal });
    expect(res.status).toBe(200);
    return collect(res, ac);
  };
  const currentRv = async (s: Served) => ((await (await call(s, '/teams?limit=1')).json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const names = (c: Collected) => c.events.map((e) => `${e.type} ${e.name}`);

  beforeAll(async () => {
    pg = await startPostgres();
    db = await pg.database();
    const start = () => startServe(['--store', db, '--insecure-http'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    [a, b] = await Promise.all([start(), start()]);
    await eventually('a replica takes the lease', async () => (a.stderr().includes(leaseLine) || b.stderr().includes(leaseLine) ? true : undefined), 10_000);
  }, 60_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    pg?.stop();
  });

  it('pg_ctl stop -m fast, then start: 503 with Retry-After for every verb, 201 within seconds after, watches lose nothing', async () => {
    expect((await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: 'before' } }) })).status).toBe(201);
    const before = (await (await call(a, '/teams/before')).json()) as Record<string, unknown> & { metadata: { resourceVersion: string } };
    const acrossB = await watch(b, before.metadata.resourceVersion);
    const leasesBefore = (a.stderr() + b.stderr()).split(leaseLine).length - 1;

    pg.halt();
    const requests: [string, string, RequestInit?][] = [
      ['list', '/teams'],
      ['get', '/teams/before'],
      ['create', '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: 'during' } }) }],
      ['update', '/teams/before', { method: 'PUT', body: JSON.stringify({ ...before, spec: { displayName: 'X' } }) }],
      ['patch', '/teams/before', { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { displayName: 'Y' } }) }],
      ['delete', '/teams/before', { method: 'DELETE' }],
      ['watch', '/teams?watch=true'],
      ['watch from a resourceVersion', `/teams?watch=true&resourceVersion=${before.metadata.resourceVersion}`],
    ];
    for (const [verb, path, init] of requests) {
      const res = await call(a, path, init);
      const body = (await res.json()) as { kind: string; reason: string; code: number; details?: { retryAfterSeconds?: number } };
      expect({ verb, status: res.status, retryAfter: res.headers.get('retry-after'), kind: body.kind, reason: body.reason, code: body.code }).toEqual({
        verb,
        status: 503,
        retryAfter: '1',
        kind: 'Status',
        reason: 'ServiceUnavailable',
        code: 503,
      });
    }
    expect((await fetch(`${a.url.replace(/\/kubernetes\/management$/, '')}/readyz`)).status).toBe(503);
    // An outage is not a bug: nothing logged at error level (pino level 50).
    expect(a.stderr()).not.toMatch(/"level":50/);

    pg.resume();
    const resumed = Date.now();
    await eventually('a create succeeds after PostgreSQL is back', async () => {
      const res = await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: 'after' } }) });
      return res.status === 201 ? true : undefined;
    }, 40_000);
    const recoveredMs = Date.now() - resumed;
    process.stdout.write(`outage: first 201 ${recoveredMs} ms after PostgreSQL was started again\n`);
    // A quiet machine recovers in a few seconds (the reconnect backoff); ten times that only catches a store that never comes back.
    expect(recoveredMs).toBeLessThan(40_000);
    for (const s of [a, b]) {
      await eventually('/readyz is ready again', async () => ((await fetch(`${s.url.replace(/\/kubernetes\/management$/, '')}/readyz`)).status === 200 ? true : undefined), 10_000).catch((err: Error) => {
        // What the replica said last is what the next person needs to see.
        throw new Error(`${err.message}; the replica ${s.process.exitCode !== null || s.process.signalCode !== null ? `exited (${s.process.exitCode ?? s.process.signalCode})` : 'is running'}; its last log lines:\n${s.stderr().slice(-4000)}`);
      });
    }

    // A watch opened after the outage sees new writes; the one open across it on the other replica sees them too, in order, once.
    const afterA = await watch(a, await currentRv(a));
    expect((await call(b, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: 'w1' } }) })).status).toBe(201);
    expect((await call(b, '/teams/w1', { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { displayName: 'W' } }) })).status).toBe(200);
    expect((await call(b, '/teams/w1', { method: 'DELETE' })).status).toBe(200);
    await eventually('the new watch on A sees the three writes', async () => (afterA.events.length >= 3 ? true : undefined), 10_000);
    await eventually('the watch on B open across the outage sees the four writes', async () => (acrossB.events.length >= 4 ? true : undefined), 10_000);
    await new Promise((r) => setTimeout(r, 1500)); // room for a duplicate to show up
    expect(names(afterA)).toEqual(['ADDED w1', 'MODIFIED w1', 'DELETED w1']);
    expect(names(acrossB)).toEqual(['ADDED after', 'ADDED w1', 'MODIFIED w1', 'DELETED w1']);
    const rvs = acrossB.events.map((e) => e.rv);
    expect(rvs).toEqual([...rvs].sort((x, y) => x - y));
    afterA.stop();
    acrossB.stop();

    // The background-work lease was lost with the database and is taken again.
    await eventually('the lease is taken again', async () => ((a.stderr() + b.stderr()).split(leaseLine).length - 1 > leasesBefore ? true : undefined), 15_000);
    expect(a.stderr() + b.stderr()).toContain('lost the background-work lease');
    for (const s of [a, b]) expect(s.stderr()).toContain('PostgreSQL notification listener reconnected');
  }, 90_000);

  it('the LISTEN connection killed with pg_terminate_backend reconnects, and the writes made meanwhile reach the watch once, in order', async () => {
    const acrossB = await watch(b, await currentRv(b));
    const listeners = async () => (await pg.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = 'teamkeys-listener' AND datname = $1", [new URL(db).pathname.slice(1)])).map((r) => r.pid);
    const killed = await listeners();
    expect(killed).toHaveLength(2); // one per replica
    for (const pid of killed) await pg.query('SELECT pg_terminate_backend($1)', [pid]);
    const written: string[] = [];
    for (let i = 0; i < 5; i++) {
      expect((await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: `l${i}` } }) })).status).toBe(201);
      written.push(`ADDED l${i}`);
    }
    await eventually('the watch on B sees the five creates', async () => (acrossB.events.length >= 5 ? true : undefined), 10_000);
    const reconnected = await eventually('both listeners reconnect', async () => {
      const now = await listeners();
      return now.length === 2 && now.every((pid) => !killed.includes(pid)) ? now : undefined;
    }, 10_000);
    expect(reconnected).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 1500)); // room for a duplicate to show up
    expect(names(acrossB)).toEqual(written);
    expect(b.stderr()).toContain('PostgreSQL notification listener lost its connection');
    acrossB.stop();
  }, 60_000);

  it('pool connections killed from the database side are logged at most once each, as idle or in use, and the next requests reconnect', async () => {
    const idle = 'PostgreSQL closed an idle pool connection';
    const inUse = 'PostgreSQL closed a connection in use';
    // Both replicas' pools go by the same application_name: what is killed is logged by one or the other.
    const count = (text: string) => (a.stderr() + b.stderr()).split('\n').filter((l) => l.includes(text)).length;
    const before = count(idle) + count(inUse);
    // Several concurrent requests leave several pool connections open (idle for 10 s before the pool closes them).
    await Promise.all(Array.from({ length: 6 }, () => call(a, '/teams?limit=1')));
    const pids = (
      await pg.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'teamkeys' AND datname = $1",
        [new URL(db).pathname.slice(1)],
      )
    ).map((r) => r.pid);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) await pg.query('SELECT pg_terminate_backend($1)', [pid]);
    // Not every killed connection can be logged: one whose query is running when it dies (either
    // replica's log tail polls through the pool) fails that query instead, which its caller retries,
    // and one the pool retires itself (idle for 10 s) between the listing and the kill is not killed.
    // CI once saw one fewer line than pids under load. What must hold: the idle ones the requests
    // above left are logged, and no connection is logged twice.
    await eventually('the killed connections are logged', async () => (count(idle) + count(inUse) - before >= 1 ? true : undefined), 5_000);
    await new Promise((r) => setTimeout(r, 1_000)); // room for the rest, and for a second line to show up
    const logged = count(idle) + count(inUse) - before;
    expect(logged).toBeGreaterThanOrEqual(1);
    expect(logged).toBeLessThanOrEqual(pids.length);
    expect((await call(a, '/teams?limit=1')).status).toBe(200);
  }, 30_000);

  it('a storage failure that is not an outage stays a 500 and is logged as an error, and the API answers at once when it is repaired', async () => {
    const inDb = (sql: string) => pg.query(sql, [], db);
    await inDb('ALTER TABLE kv RENAME TO kv_moved');
    try {
      // A write: reads are answered by the watch cache, which needs only the store's revision (in
      // `meta`), and may rightly answer them; a write must reach the missing table.
      const res = await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: 'schema-gone' } }) });
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError' });
      expect(res.headers.get('retry-after')).toBeNull();
      const logged = () => a.stderr().split('\n').filter((l) => l.includes('"level":50') && l.includes('"msg":"request failed"')).join('\n');
      await eventually('the failure is logged as an error', async () => (logged().includes('relation \\"kv\\" does not exist') ? true : undefined), 5_000);
      // Its log tail polls once a second and fails the same way: every watch ends (the watch cache's,
      // the team index's). Once the table is back the API must answer at once, not 503 while they
      // recover: nothing was written meanwhile, so what the team index holds is still exact.
      await eventually('the log tail fails', async () => (a.stderr().includes('reading the log for watchers failed; ending every watch') ? true : undefined), 5_000);
    } finally {
      await inDb('ALTER TABLE kv_moved RENAME TO kv');
    }
    expect((await call(a, '/teams')).status).toBe(200);
  }, 30_000);
  it('a database that refuses writes (read-only here, as a standby after a failover is) answers 503 with Retry-After saying why, then 201 once it takes writes again', async () => {
    const name = new URL(db).pathname.slice(1);
    // New sessions of the database are read-only; its open sessions are ended so the pools reconnect into it.
    const reconnectAll = () => pg.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
    await pg.query(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    await reconnectAll();
    try {
      let last: { status: number; retryAfter: string | null; body: { reason?: string; message?: string } } | undefined;
      await eventually('a write is refused as read-only', async () => {
        const res = await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: 'read-only' } }) });
        last = { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { reason?: string; message?: string } };
        return last.body.message?.includes('read-only') ? true : undefined;
      }, 15_000);
      expect(last).toMatchObject({ status: 503, body: { reason: 'ServiceUnavailable' } });
      expect(last!.retryAfter).not.toBeNull();
      expect(last!.body.message).toContain('PostgreSQL refuses writes: it is read-only');
      expect(a.stderr()).not.toMatch(/"level":50[^\n]*read-only transaction/);
    } finally {
      await pg.query(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
      await reconnectAll();
    }
    await eventually('writes are taken again', async () => ((await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: 'writable-again' } }) })).status === 201 ? true : undefined), 15_000);
  }, 60_000);
});
