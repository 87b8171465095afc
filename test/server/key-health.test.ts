/**
 * Key health on the server: /metrics counts keys expiring within 1, 7 and 30 days and expired keys
 * not yet removed, a warning is logged once per key as it enters --warn-expiry, and
 * --disable-unused-after disables unused keys (Login keys too) with the reason in an annotation
 * and the audit trail, never the last working management-admin key. Time is a ManualClock; the
 * sweep is run by the test (as its interval would).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { loggerOptions } from '../../src/cli/logging.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { auditApiVersion, type AuditEvent } from '../../src/api/audit-event.js';
import { mintLoginKey } from '../../src/signin/mint.js';
import type { KeyHealthSweep } from '../../src/server/key-health-sweep.js';
import { apiPrefix } from '../../src/server/server.js';
import { ManualClock, day, hour } from '../support/clock.js';
import type { StoredObject } from '../../src/store/types.js';
import { startInProcess, type InProcess } from './in-process.js';
import { startServe, type Served } from './serve-process.js';

const start = '2026-08-01T00:00:00Z';
const json = { 'Content-Type': 'application/json' };

/** A metric's value from the text exposition (0 when the series is absent). */
function metric(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('key health on the server', () => {
  let server: InProcess | undefined;
  let served: Served | undefined;
  afterEach(async () => {
    await server?.close();
    await served?.stop();
    server = served = undefined;
  });

  async function newKey(s: InProcess, name: string, spec: Record<string, unknown> = {}): Promise<string> {
    const res = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, spec: { user: name, ...spec } }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { spec: { key: string } }).spec.key;
  }
  const use = async (s: InProcess, key: string, name: string) => {
    const res = await s.fetch(`${s.api}/ownedaccesskeys/${name}`, { headers: { Authorization: `Bearer ${key}` } });
    return { status: res.status, message: ((await res.json()) as { message?: string }).message };
  };
  const metrics = async (s: InProcess) => {
    await s.keyHealthSweep!.sweep();
    const res = await s.fetch(`${s.base}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  };
  const counts = (text: string) => ({
    '1d': metric(text, 'teamkeys_access_keys_expiring', 'within="1d",login="false"'),
    '7d': metric(text, 'teamkeys_access_keys_expiring', 'within="7d",login="false"'),
    '30d': metric(text, 'teamkeys_access_keys_expiring', 'within="30d",login="false"'),
    expired: metric(text, 'teamkeys_access_keys_expired', 'login="false"'),
  });
  /** `n` user keys ci-0.. with a ttl of two days, made through the registry 50 at a time. */
  async function oneDayKeys(s: InProcess, n: number): Promise<void> {
    const keys = s.registry.ownedaccesskeys;
    for (let i = 0; i < n; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => keys.create({ apiVersion: keys.info.apiVersion, kind: 'OwnedAccessKey', metadata: { name: `ci-${i + j}` }, spec: { user: `ci-${i + j}`, ttl: 2 * 86_400 } }, { fieldManager: 'test' })));
    }
  }
  /** A server with n one-day keys, all inside a 7-day warning window; counts the warnings it has logged. */
  async function warnedOneDayKeys(n: number): Promise<() => number> {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(...chunk.toString().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)), done()) });
    server = await serverAt(new ManualClock(start), { logger: pino(loggerOptions('warn'), sink), keyHealth: { warnExpiryMs: 7 * day } });
    await oneDayKeys(server, n);
    return () => lines.filter((l) => String(l.msg).includes('expires at')).length;
  }
  /** A sweep over n warned one-day keys, under way: resolves at the first turn after it warned of a key. */
  async function sweepUnderWay(n: number): Promise<{ warnings: () => number; sweep: KeyHealthSweep; sweeping: Promise<void> }> {
    const warnings = await warnedOneDayKeys(n);
    const sweep = server!.keyHealthSweep!;
    const sweeping = sweep.sweep();
    await new Promise<void>((resolve) => {
      const check = () => (warnings() > 0 ? resolve() : setImmediate(check));
      check();
    });
    return { warnings, sweep, sweeping };
  }
  /** A server on a ManualClock whose sweep runs only when the test asks (its interval is a day of real time). */
  async function serverAt(clock: ManualClock, opts: Parameters<typeof startInProcess>[0] = {}) {
    const s = await startInProcess({ now: clock.now, ...opts, keyHealth: { intervalMs: day, ...opts.keyHealth } });
    await vi.waitFor(() => expect(s.keyHealthSweep?.leading).toBe(true));
    return s;
  }

  it('the expiry gauges move as time passes: 1, 7, 30 days, then expired until removed; no per-key labels', async () => {
    const clock = new ManualClock(start);
    server = await serverAt(clock);
    await newKey(server, 'two-days', { ttl: 2 * 86_400 });
    await newKey(server, 'ten-days', { ttl: 10 * 86_400 });
    await newKey(server, 'forty-days', { ttl: 40 * 86_400 });
    await newKey(server, 'forever');
    const text = await metrics(server);
    expect(counts(text)).toEqual({ '1d': 0, '7d': 1, '30d': 2, expired: 0 });
    expect(text).not.toMatch(/teamkeys_access_keys_\w+\{[^}]*(two-days|ten-days|name=|key=)/);
    clock.advance(day + 12 * hour);
    expect(counts(await metrics(server))).toEqual({ '1d': 1, '7d': 1, '30d': 2, expired: 0 });
    clock.advance(day);
    expect(counts(await metrics(server))).toEqual({ '1d': 0, '7d': 0, '30d': 1, expired: 1 });
    clock.advance(5 * day);
    expect(counts(await metrics(server))).toEqual({ '1d': 0, '7d': 1, '30d': 1, expired: 1 });
    // Disabled keys break nobody when they expire: not counted as expiring (but counted once expired, until removed).
    await server.fetch(`${server.api}/ownedaccesskeys/ten-days`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { disabled: true } }) });
    expect(counts(await metrics(server))).toEqual({ '1d': 0, '7d': 0, '30d': 0, expired: 1 });
    clock.advance(3 * day);
    expect(counts(await metrics(server))).toEqual({ '1d': 0, '7d': 0, '30d': 1, expired: 2 });
  });

  it('logs a warning once per key as it enters --warn-expiry, never the key value; forgets deleted keys', async () => {
    const clock = new ManualClock(start);
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(...chunk.toString().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)), done()) });
    server = await serverAt(clock, { logger: pino(loggerOptions('warn'), sink), keyHealth: { warnExpiryMs: 7 * day } });
    const value = await newKey(server, 'ci', { ttl: 10 * 86_400 });
    await newKey(server, 'later', { ttl: 30 * 86_400 });
    const warnings = () => lines.filter((l) => String(l.msg).includes('expires at'));
    await server.keyHealthSweep!.sweep();
    expect(warnings()).toEqual([]);
    clock.advance(4 * day);
    for (let i = 0; i < 3; i++) {
      await server.keyHealthSweep!.sweep();
      clock.advance(hour);
    }
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ level: 40, keyName: 'ci', owner: 'ci', expiresAt: '2026-08-11T00:00:00Z', msg: 'access key "ci" of ci expires at 2026-08-11T00:00:00Z, in 6d: rotate it or extend its ttl before it is refused' });
    expect(JSON.stringify(lines)).not.toContain(value);
    expect(server.keyHealthSweep!.warnedCount).toBe(1);
    expect((await server.fetch(`${server.api}/ownedaccesskeys/ci`, { method: 'DELETE' })).status).toBe(200);
    await server.keyHealthSweep!.sweep();
    expect(server.keyHealthSweep!.warnedCount).toBe(0);
    clock.advance(20 * day);
    await server.keyHealthSweep!.sweep();
    await server.keyHealthSweep!.sweep();
    expect(warnings().map((w) => w.keyName)).toEqual(['ci', 'later']);
  });

  it('a key written past the API without a uid is warned of like the others, and the sweep goes on past it', async () => {
    const clock = new ManualClock(start);
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(...chunk.toString().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)), done()) });
    server = await serverAt(clock, { logger: pino(loggerOptions('warn'), sink), keyHealth: { warnExpiryMs: 7 * day } });
    await newKey(server, 'a-good', { ttl: 2 * 86_400 });
    // As a restore or a hand edit could leave it: no uid (the API always sets one).
    await server.registry.ownedaccesskeys.ctx.store.create('/ownedaccesskeys/b-nouid', { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'b-nouid', creationTimestamp: start }, spec: { user: 'b-nouid', ttl: 2 * 86_400 } } as StoredObject);
    await newKey(server, 'c-good', { ttl: 2 * 86_400 });
    await server.keyHealthSweep!.sweep();
    await server.keyHealthSweep!.sweep();
    expect(lines.filter((l) => String(l.msg).includes('expires at')).map((l) => l.keyName)).toEqual(['a-good', 'b-nouid', 'c-good']);
    expect(lines.filter((l) => String(l.msg).includes('sweep failed'))).toEqual([]);
    expect(server.keyHealthSweep!.warnedCount).toBe(3);
  });

  it('--disable-unused-after disables keys unused (or never used) that long: annotated, audited as system:teamkeys, then refused', async () => {
    const clock = new ManualClock(start);
    server = await serverAt(clock, { audit: true, keyHealth: { disableUnusedAfterMs: 90 * day } });
    const idle = await newKey(server, 'idle');
    const busy = await newKey(server, 'busy');
    const off = await newKey(server, 'already-off');
    await server.fetch(`${server.api}/ownedaccesskeys/already-off`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { disabled: true } }) });
    clock.advance(80 * day);
    expect((await use(server, busy, 'busy')).status).toBe(200);
    clock.advance(11 * day);
    expect(metric(await metrics(server), 'teamkeys_access_keys_auto_disabled_total')).toBe(1);

    const stored = (await (await server.fetch(`${server.api}/ownedaccesskeys/idle`)).json()) as { spec: { disabled?: boolean }; metadata: { annotations?: Record<string, string> } };
    const reason = 'never used since its creation at 2026-08-01T00:00:00Z (no use for 90d; --disable-unused-after)';
    expect(stored.spec.disabled).toBe(true);
    expect(stored.metadata.annotations?.['management.service/disabled-reason']).toBe(reason);
    expect(await use(server, idle, 'idle')).toEqual({ status: 401, message: 'access key is disabled' });
    expect((await use(server, busy, 'busy')).status).toBe(200);
    expect(await use(server, off, 'already-off')).toEqual({ status: 401, message: 'access key is disabled' });

    const events = ((await (await server.fetch(`${server.base}${apiPrefix}/apis/${auditApiVersion}/events?resource=ownedaccesskeys&name=idle`)).json()) as { items: AuditEvent[] }).items;
    const disabling = events.filter((e) => e.fieldManager === 'teamkeys-unused-keys');
    expect(disabling).toHaveLength(1);
    expect(disabling[0]).toMatchObject({ verb: 'patch', user: { username: 'system:teamkeys' }, annotations: { 'management.service/disabled-reason': reason } });
    expect(JSON.stringify(events)).not.toContain(idle);
    // Enabled again by someone: a fresh window from then, not disabled again at the next sweep.
    const enable = await server.fetch(`${server.api}/ownedaccesskeys/idle`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { disabled: false } }) });
    expect(enable.status).toBe(200);
    await server.keyHealthSweep!.sweep();
    clock.advance(89 * day);
    await server.keyHealthSweep!.sweep();
    expect((await use(server, idle, 'idle')).status).toBe(200);
    clock.advance(91 * day);
    await server.keyHealthSweep!.sweep();
    expect(await use(server, idle, 'idle')).toEqual({ status: 401, message: 'access key is disabled' });
    // The already-disabled key was not written again.
    const offEvents = ((await (await server.fetch(`${server.base}${apiPrefix}/apis/${auditApiVersion}/events?resource=ownedaccesskeys&name=already-off`)).json()) as { items: AuditEvent[] }).items;
    expect(offEvents.filter((e) => e.fieldManager === 'teamkeys-unused-keys')).toEqual([]);
  });

  it('a key written past the API without a creation time and never used counts as unused since ever: the first sweep disables it, saying so', async () => {
    const clock = new ManualClock(start);
    server = await serverAt(clock, { keyHealth: { disableUnusedAfterMs: 90 * day } });
    const dated = await newKey(server, 'dated');
    // As a restore or a hand edit could leave it: no creationTimestamp (the API always sets one).
    await server.registry.ownedaccesskeys.ctx.store.create('/ownedaccesskeys/undated', { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'undated', uid: 'uid-undated' }, spec: { user: 'undated' } } as StoredObject);
    await server.keyHealthSweep!.sweep();
    const stored = (await (await server.fetch(`${server.api}/ownedaccesskeys/undated`)).json()) as { spec: { disabled?: boolean }; metadata: { annotations?: Record<string, string> } };
    expect(stored.spec.disabled).toBe(true);
    expect(stored.metadata.annotations?.['management.service/disabled-reason']).toBe('never used, and without a creation time (no use for 90d; --disable-unused-after)');
    expect((await use(server, dated, 'dated')).status).toBe(200);
  });

  it('a use this replica holds in memory, not yet in status.lastActivity, keeps the key enabled', async () => {
    const clock = new ManualClock(start);
    // status.lastActivity is written on the first use, then at most once per interval (here 100 days).
    server = await serverAt(clock, { activityIntervalMs: 100 * day, keyHealth: { disableUnusedAfterMs: 90 * day } });
    const key = await newKey(server, 'ci');
    expect((await use(server, key, 'ci')).status).toBe(200);
    clock.advance(89 * day);
    expect((await use(server, key, 'ci')).status).toBe(200);
    clock.advance(2 * day);
    await server.keyHealthSweep!.sweep();
    const stored = (await server.registry.ownedaccesskeys.get('ci')) as { spec: { disabled?: boolean }; status?: { lastActivity?: string } };
    expect(stored.status?.lastActivity).toBe('2026-08-01T00:00:00Z');
    expect(stored.spec.disabled).toBeUndefined();
    expect((await use(server, key, 'ci')).status).toBe(200);
  });

  it('Login keys follow the same rule: an unused one is disabled with its reason', async () => {
    const clock = new ManualClock(start);
    server = await serverAt(clock, { keyHealth: { disableUnusedAfterMs: 30 * day } });
    const minted = await mintLoginKey(
      server.registry,
      { username: 'lena', identity: { userId: 'u-lena', username: 'lena', connector: 'test', groups: [] } as never, ttlSeconds: 365 * 86_400, requester: { username: 'lena' }, via: 'in a test' },
      clock.now(),
    );
    clock.advance(31 * day);
    await server.keyHealthSweep!.sweep();
    const stored = (await (await server.fetch(`${server.api}/ownedaccesskeys/${minted.name}`)).json()) as { spec: { disabled?: boolean; type?: string }; metadata: { annotations?: Record<string, string> } };
    expect(stored.spec).toMatchObject({ type: 'Login', disabled: true });
    expect(stored.metadata.annotations?.['management.service/disabled-reason']).toBe('never used since its creation at 2026-08-01T00:00:00Z (no use for 30d; --disable-unused-after)');
    expect(await use(server, minted.key, minted.name)).toEqual({ status: 401, message: 'access key is disabled' });
  });

  it('never disables the last working management-admin key: the bootstrap key has no exemption, the most recently used admin key stays', async () => {
    const clock = new ManualClock(start);
    server = await serverAt(clock, { keyHealth: { disableUnusedAfterMs: 90 * day } });
    const keys = server.registry.ownedaccesskeys;
    const made = async (name: string, spec: Record<string, unknown>) =>
      ((await keys.create({ apiVersion: keys.info.apiVersion, kind: 'OwnedAccessKey', metadata: { name }, spec }, { fieldManager: 'test' })).object as { spec: { key: string } }).spec.key;
    clock.advance(hour);
    const spare = await made('admin-spare', { user: 'admin' });
    await made('dev', { user: 'dev' });
    await made('admin-scoped', { user: 'admin', scope: { roles: [{ role: 'cli' }] } });
    clock.advance(91 * day);
    // Nothing here goes through HTTP (which would use the bootstrap key): every key is unused.
    await server.keyHealthSweep!.sweep();
    const disabled = async (name: string) => ((await keys.get(name)) as { spec: { disabled?: boolean } }).spec.disabled === true;
    expect({ admin: await disabled('admin'), spare: await disabled('admin-spare'), dev: await disabled('dev'), scoped: await disabled('admin-scoped') }).toEqual({ admin: true, spare: false, dev: true, scoped: true });
    const res = await server.fetch(`${server.api}/ownedaccesskeys/dev`, { headers: { Authorization: `Bearer ${spare}` } });
    expect(res.status).toBe(200);
    // Next sweep: the spare is still the last working admin key, so it stays.
    clock.advance(day);
    await server.keyHealthSweep!.sweep();
    expect(await disabled('admin-spare')).toBe(false);
  });

  it('a sweep over thousands of keys in the window reads them one at a time: the event loop gets turns during it, and every key is counted and warned of once', async () => {
    const n = 2_500;
    const warnings = await warnedOneDayKeys(n);
    const s = server!;
    // A request arriving during the sweep stands for this callback: before, it waited for all of it.
    let warnedAtTurn: number | undefined;
    setImmediate(() => (warnedAtTurn = warnings()));
    const text = await metrics(s);
    expect(warnings()).toBe(n);
    expect(warnedAtTurn).toBeGreaterThan(0);
    expect(warnedAtTurn).toBeLessThan(n);
    expect(counts(text)).toEqual({ '1d': 0, '7d': n, '30d': n, expired: 0 });
    expect(s.keyHealthSweep!.warnedCount).toBe(n);
    await s.keyHealthSweep!.sweep();
    expect(warnings()).toBe(n);
  });

  it("a request's several turns of the event loop go on between two steps of a sweep, not one turn per step: the sweep pauses on a timer between steps", async () => {
    const n = 3_000;
    const warnings = await warnedOneDayKeys(n);
    const turn = () => new Promise((r) => setImmediate(r));
    // Only setTimeout is faked, and only while the sweep runs: the pause's timer fires when the
    // test says, so what runs between two steps does not depend on how loaded the machine is.
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      let done = false;
      const sweeping = server!.keyHealthSweep!.sweep().then(() => (done = true));
      for (let t = 0; t < 1_000 && warnings() === 0; t++) await turn();
      const first = warnings();
      expect(first).toBeGreaterThan(0);
      // A request during the sweep stands for many turns (the revision read, the writer thread's
      // answer...): none of them lets the next step run while the pause's timer waits. With a bare
      // turn between steps, one step ran per turn (five steps of 250 keys before the pause).
      for (let t = 0; t < 50; t++) await turn();
      expect(warnings()).toBe(first);
      // The timer fires: one step, then the sweep waits on its next pause.
      vi.advanceTimersByTime(1);
      for (let t = 0; t < 50 && warnings() === first; t++) await turn();
      const second = warnings();
      expect(second).toBeGreaterThan(first);
      for (let t = 0; t < 50; t++) await turn();
      expect(warnings()).toBe(second);
      expect(second - first).toBeLessThanOrEqual(100);
      // The rest of the sweep, a timer at a time.
      for (let t = 0; t < 10_000 && !done; t++) (vi.advanceTimersByTime(1), await turn());
      await sweeping;
      expect(warnings()).toBe(n);
      // Stopped while the timers are still the test's: a pass that follows (asked for meanwhile)
      // would otherwise wait on a faked timer that never fires, and the close on it for 5 s.
      let stopped = false;
      void server!.keyHealthSweep!.stop().then(() => (stopped = true));
      for (let t = 0; t < 2_000 && !stopped; t++) (vi.advanceTimersByTime(1), await turn());
      expect(stopped).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a stop during a long sweep does not wait for the rest of it: the sweep ends at its next pause', async () => {
    const n = 3_000;
    const { warnings, sweep, sweeping } = await sweepUnderWay(n);
    await sweep.stop();
    await sweeping;
    // Stopped after its first steps, not after all 3,000 keys.
    expect(warnings()).toBeLessThan(n);
    expect(warnings()).toBeGreaterThan(0);
  });

  it('the next sweep waits at least 20 times the last one took: a sweep over many keys takes at most 5% of the event loop', async () => {
    const clock = new ManualClock(start);
    server = await serverAt(clock, { keyHealth: { intervalMs: 60_000 } });
    expect(server.keyHealthSweep!.nextIntervalMs).toBe(60_000);
    await oneDayKeys(server, 1_000);
    // The sweep judged every key (the gauges count them), and took some time of its own doing so.
    expect(counts(await metrics(server))['7d']).toBe(1_000);
    const sweep = server.keyHealthSweep!;
    expect(sweep.lastSweepMs).toBeGreaterThan(0);
    // 60 s stays the interval unless the sweep's own time, times 20, is longer.
    expect(sweep.nextIntervalMs).toBe(Math.max(60_000, 20 * sweep.lastSweepMs));
  });

  it('a sweep whose keys take longer than the interval to judge sets the next one 20 times its own time away', async () => {
    const clock = new ManualClock(start);
    server = await serverAt(clock, { keyHealth: { intervalMs: 1 } });
    await oneDayKeys(server, 600);
    await server.keyHealthSweep!.sweep();
    const sweep = server.keyHealthSweep!;
    // Judging 600 keys takes far more than the 0.05 ms that would keep the interval at 1 ms.
    expect(sweep.nextIntervalMs).toBeGreaterThan(1);
    expect(sweep.nextIntervalMs).toBe(20 * sweep.lastSweepMs);
  });

  it('a real teamkeys serve counts a key with a ttl of 2 days in the 7- and 30-day gauges', async () => {
    // The sweep runs at start and then every minute: the key is made, and the server started again on the same database.
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-key-health-'));
    const adminKey = `KeyHealthAdmin${'k'.repeat(50)}`;
    const admin = { Authorization: `Bearer ${adminKey}` };
    const serve = () => startServe(['--store', `sqlite:${join(dir, 'store.db')}`, '--insecure-http', '--log-level', 'warn'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    try {
      served = await serve();
      const res = await fetch(`${served.url}/apis/management.service/v1/ownedaccesskeys`, {
        method: 'POST',
        headers: { ...admin, ...json },
        body: JSON.stringify({ metadata: { name: 'ci' }, spec: { user: 'ci', ttl: 2 * 86_400 } }),
      });
      expect(res.status).toBe(201);
      await served.stop();
      served = await serve();
      const origin = new URL(served.url).origin;
      let text = '';
      await vi.waitFor(async () => {
        text = await (await fetch(`${origin}/metrics`, { headers: admin })).text();
        expect(metric(text, 'teamkeys_key_health_last_sweep_timestamp_seconds')).toBeGreaterThan(0);
      }, { timeout: 10_000, interval: 100 });
      expect(counts(text)).toEqual({ '1d': 0, '7d': 1, '30d': 1, expired: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
