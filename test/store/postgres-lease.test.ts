/**
 * Issue 41, points 1 and 2: one leader at a time on PostgreSQL. Two `teamkeys serve` replicas with
 * a short --lease-duration (the bound: a paused or cut-off leader is replaced within it, plus the
 * other's one-second retry). The leader's lease connection cut on the database's side only (its
 * own side open and silent, through a proxy the test controls) and its session terminated: the
 * other takes over, the old one's background write is refused by the store (fencing) until it
 * steps down by itself; a leader under SIGSTOP loses the lease, the other resumes the background
 * work, and on SIGCONT the old one steps down without writing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from '../server/serve-process.js';
import { eventually } from '../support/eventually.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
import { PostgresLease } from '../../src/store/backends/postgres-lease.js';
import { PostgresStore } from '../../src/store/backends/postgres.js';
import { isStorageError } from '../../src/store/errors.js';
import type { Fence } from '../../src/store/fence.js';
import { fencedStore } from '../../src/store/fenced-store.js';

const adminKey = `LeaseTest${'l'.repeat(55)}`;
const acquiredLine = 'acquired the background-work lease';
const lostLine = 'lost the background-work lease; stopping background work';
const refusedLine = 'refused a background write: this replica no longer holds the background-work lease';
const leaseDurationS = 12;

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const logOf = (s: Served, from = 0): LogLine[] =>
  s
    .stderr()
    .slice(from)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
const logged = (s: Served, msg: string, from = 0) => logOf(s, from).filter((l) => l.msg === msg);
const call = (s: Served, path: string, init: RequestInit = {}) =>
  fetch(`${s.url}/apis/management.service/v1/${path}`, { ...init, headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' } });

/** teamkeys_leader of the replica (its one series), and its lease counters, from /metrics. */
async function leaseMetrics(s: Served): Promise<{ leader: number; losses: number; fenced: number }> {
  const text = await (await fetch(`${new URL(s.url).origin}/metrics`, { headers: { Authorization: `Bearer ${adminKey}` } })).text();
  const value = (re: RegExp) => Number(text.match(re)?.[1] ?? NaN);
  return {
    leader: value(/^teamkeys_leader\{replica="[^"]+"\} (\d+)$/m),
    losses: value(/^teamkeys_lease_losses_total (\d+)$/m),
    fenced: value(/^teamkeys_lease_fenced_writes_total (\d+)$/m),
  };
}

/** A team with one dependent key, the team then deleted through `via`: the key is the garbage collector's to delete. */
async function orphanKey(via: Served, name: string): Promise<void> {
  const team = (await (await call(via, 'teams', { method: 'POST', body: JSON.stringify({ metadata: { name } }) })).json()) as { metadata: { uid: string } };
  const ownerReferences = [{ apiVersion: 'management.service/v1', kind: 'Team', name, uid: team.metadata.uid }];
  expect((await call(via, 'ownedaccesskeys', { method: 'POST', body: JSON.stringify({ metadata: { name: `${name}-key`, ownerReferences }, spec: { user: 'u' } }) })).status).toBe(201);
  expect((await call(via, `teams/${name}`, { method: 'DELETE' })).status).toBe(200);
}

const keyStatus = async (s: Served, name: string) => (await call(s, `ownedaccesskeys/${name}-key`)).status;

/** The replica that logged taking the lease (after stderr offsets `from`), once exactly one has. */
async function leaderOf(replicas: Served[], from: number[] = [0, 0]): Promise<Served> {
  return eventually('one replica takes the lease', () => {
    const holders = replicas.filter((s, i) => logged(s, acquiredLine, from[i]).length > 0);
    return holders.length === 1 ? holders[0] : undefined;
  }, 20_000);
}

let pg: PostgresServer;
beforeAll(async () => {
  pg = await startPostgres();
}, 60_000);
afterAll(() => pg?.stop());

/** A lease that can be made to freeze, as a paused process does: renewals hang and its connection stays open and silent. */
class StallingLease extends PostgresLease {
  stalled = false;
  protected override extend(token: number): Promise<boolean> {
    return this.stalled ? new Promise(() => {}) : super.extend(token);
  }
  protected override async drop(): Promise<void> {
    if (!this.stalled) await super.drop();
  }
}

const fenceOf = (token: number): Fence => ({ token, valid: () => true, refused: () => {} });

describe('the PostgreSQL lease, in-process', () => {
  it('a silent holder steps down at its deadline, PostgreSQL ends its idle session so another takes the lock, and the old token is refused', async () => {
    const url = await pg.database();
    const store = new PostgresStore(url);
    const a = new StallingLease(url, { ttlMs: 2000, renewMs: 400 });
    const b = new PostgresLease(url, { ttlMs: 2000, renewMs: 400 });
    const aLost: string[] = [];
    a.onLost((reason) => aLost.push(reason));
    let renewals = 0;
    a.onRenewed(() => renewals++);
    try {
      expect(await a.tryAcquire()).toBe(true);
      const aToken = a.token()!;
      expect(await b.tryAcquire()).toBe(false);
      await eventually('a renews past its lease duration', () => renewals >= 6, 10_000);
      expect(await b.tryAcquire()).toBe(false);
      await fencedStore(store, () => fenceOf(aToken)).create('/t/by-a', { metadata: {} });

      a.stalled = true;
      await eventually('a steps down at its deadline', () => aLost.length === 1, 10_000);
      expect(aLost[0]).toMatch(/no renewal succeeded within 1800 ms/);
      // Its connection is still open (a frozen process closes nothing), but PostgreSQL ends the
      // session once idle for the lease duration, which frees the lock.
      await eventually('b takes the lock', () => b.tryAcquire(), 10_000);
      expect(b.token()).toBe(aToken + 1);

      const stale = await fencedStore(store, () => fenceOf(aToken)).create('/t/stale', { metadata: {} }).catch((err: unknown) => err);
      expect(isStorageError(stale, 'Fenced'), String(stale)).toBe(true);
      expect((stale as Error).message).toContain(`fencing token ${aToken}: this replica no longer holds the background-work lease (the lease's token is now ${aToken + 1})`);
      await expect(store.get('/t/stale')).rejects.toThrow(/not found/);
      await fencedStore(store, () => fenceOf(aToken + 1)).delete('/t/by-a');
      await store.create('/t/request', { metadata: {} });
    } finally {
      a.stalled = false;
      await a.release();
      await b.release();
      await store.close();
    }
  }, 60_000);
});

const startReplica = (url: string, leaseS = leaseDurationS) => startServe(['--store', url, '--insecure-http', '--lease-duration', `${leaseS}s`], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });

describe('the leader cut off from PostgreSQL on the database side', () => {
  let proxy: TcpProxy;
  let replicas: Served[] = [];
  let dbName = '';

  beforeAll(async () => {
    const db = new URL(await pg.database());
    dbName = db.pathname.slice(1);
    proxy = await startTcpProxy(Number(db.port));
    db.port = String(proxy.port);
    replicas = await Promise.all([startReplica(db.href), startReplica(db.href)]);
  }, 60_000);
  afterAll(async () => {
    for (const s of replicas) await s.stop('SIGKILL');
    await proxy?.close();
  });

  it('the other replica leads within the bound, the old one is refused by the store and steps down', async () => {
    const old = await leaderOf(replicas);
    const other = replicas.find((s) => s !== old)!;
    const marks = replicas.map((s) => s.stderr().length);
    // The session holding the lease lock: its database-side socket stops forwarding, then the database ends it.
    const [holder] = await pg.query<{ pid: number; client_port: number }>(
      "SELECT a.pid, a.client_port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.objid = 7315002 AND l.granted AND a.datname = $1",
      [dbName],
    );
    expect(holder, 'the lease lock is held by a session').toBeDefined();
    expect(proxy.cutDatabaseSide(holder!.client_port)).toBe(true);
    const cutAt = Date.now();
    await pg.query('SELECT pg_terminate_backend($1)', [holder!.pid]);

    // The other replica takes the lease (the lock is free at once) while the old one still believes it leads.
    await eventually('the other replica takes the lease', () => logged(other, acquiredLine, marks[replicas.indexOf(other)]).length > 0, 20_000);
    expect(logged(old, lostLine, marks[replicas.indexOf(old)])).toEqual([]);

    // The old leader's garbage collector still runs: with the new leader paused, its delete of the
    // orphaned key reaches the store, which refuses it (stale fencing token); the key stays.
    other.process.kill('SIGSTOP');
    try {
      await orphanKey(old, 'cut-owner');
      const refusal = await eventually('the old leader logs its refused write', () => logged(old, refusedLine, marks[replicas.indexOf(old)])[0], 8_000);
      expect(String(refusal.reason)).toMatch(/fencing token \d+: .*the lease's token is now \d+/);
      expect(await keyStatus(old, 'cut-owner')).toBe(200);
    } finally {
      other.process.kill('SIGCONT');
    }
    await eventually('the new leader collects the key', async () => (await keyStatus(other, 'cut-owner')) === 404, 15_000);

    // The old one steps down by itself within the lease duration, its renewal never answered.
    const lost = await eventually('the old leader steps down', () => logged(old, lostLine, marks[replicas.indexOf(old)])[0], 30_000);
    expect(String(lost.reason)).toMatch(/no renewal succeeded within/);
    expect(Date.now() - cutAt).toBeLessThan((leaseDurationS + 10) * 1000);
    const [oldMetrics, otherMetrics] = await Promise.all([leaseMetrics(old), leaseMetrics(other)]);
    expect({ old: oldMetrics.leader, other: otherMetrics.leader }).toEqual({ old: 0, other: 1 });
    expect(oldMetrics.losses).toBe(1);
    expect(oldMetrics.fenced).toBeGreaterThan(0);
    // It does not take the lease back while the other holds it.
    expect(logged(old, acquiredLine, marks[replicas.indexOf(old)])).toEqual([]);
  }, 90_000);
});

describe('a paused leader', () => {
  // Shorter than above: nothing here must happen inside the window before the old leader notices.
  const pausedLeaseS = 6;
  let replicas: Served[] = [];

  beforeAll(async () => {
    const db = await pg.database();
    replicas = await Promise.all([startReplica(db, pausedLeaseS), startReplica(db, pausedLeaseS)]);
  }, 60_000);
  afterAll(async () => {
    for (const s of replicas) {
      s.process.kill('SIGCONT');
      await s.stop('SIGKILL');
    }
  });

  it('loses the lease within the bound under SIGSTOP; the other resumes the background work; on SIGCONT the old one steps down and writes nothing', async () => {
    const paused = await leaderOf(replicas);
    const other = replicas.find((s) => s !== paused)!;
    const marks = replicas.map((s) => s.stderr().length);
    paused.process.kill('SIGSTOP');
    const stoppedAt = Date.now();
    try {
      // PostgreSQL ends the idle session after the lease duration; the other takes the lock at its next try.
      await eventually('the other replica takes the lease', () => logged(other, acquiredLine, marks[replicas.indexOf(other)]).length > 0, 60_000);
      expect(Date.now() - stoppedAt).toBeLessThan((pausedLeaseS + 10) * 1000);
      await orphanKey(other, 'paused-owner');
      await eventually('the new leader collects the key', async () => (await keyStatus(other, 'paused-owner')) === 404, 15_000);
    } finally {
      paused.process.kill('SIGCONT');
    }
    const lost = await eventually('the woken leader steps down', () => logged(paused, lostLine, marks[replicas.indexOf(paused)])[0], 15_000);
    expect(String(lost.reason)).toMatch(/no renewal succeeded within|connection to PostgreSQL closed/);
    const [pausedMetrics, otherMetrics] = await Promise.all([leaseMetrics(paused), leaseMetrics(other)]);
    expect({ paused: pausedMetrics.leader, other: otherMetrics.leader }).toEqual({ paused: 0, other: 1 });
    // Nothing done as leader after waking: no collection of its own, no write the store accepted.
    const after = logOf(paused, marks[replicas.indexOf(paused)]);
    expect(after.filter((l) => l.msg === 'garbage collected')).toEqual([]);
    expect(after.filter((l) => l.msg === acquiredLine)).toEqual([]);
  }, 120_000);
});
