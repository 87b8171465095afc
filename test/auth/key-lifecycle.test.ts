import { afterEach, describe, expect, it } from 'vitest';
import { removeExpiredKeys } from '../../src/auth/expired-keys.js';
import { ActivityRecorder } from '../../src/auth/activity.js';
import pino from 'pino';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { create } from './fixture.js';

describe('access key lifecycle over HTTP', () => {
  let server: InProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function newKey(s: InProcess, name: string, spec: Record<string, unknown>): Promise<string> {
    const res = await create(s, 'ownedaccesskeys', { metadata: { name }, spec: { user: name, ...spec } });
    expect(res.status).toBe(201);
    return ((await res.json()) as { spec: { key: string } }).spec.key;
  }
  const use = async (s: InProcess, key: string, name: string) => {
    const res = await s.fetch(`${s.api}/ownedaccesskeys/${name}`, { headers: { Authorization: `Bearer ${key}` } });
    return { status: res.status, message: ((await res.json()) as { message?: string }).message };
  };

  it('disabling a key with a JSON patch makes its next request 401; enabling it restores it', async () => {
    server = await startInProcess();
    const key = await newKey(server, 'dora', {});
    expect((await use(server, key, 'dora')).status).toBe(200);
    const off = await server.fetch(`${server.api}/ownedaccesskeys/dora`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json-patch+json' },
      body: JSON.stringify([{ op: 'add', path: '/spec/disabled', value: true }]),
    });
    expect(off.status).toBe(200);
    expect(await use(server, key, 'dora')).toEqual({ status: 401, message: 'access key is disabled' });
    await server.fetch(`${server.api}/ownedaccesskeys/dora`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json-patch+json' },
      body: JSON.stringify([{ op: 'replace', path: '/spec/disabled', value: false }]),
    });
    expect((await use(server, key, 'dora')).status).toBe(200);
  });

  it('the record of key use forgets a key once it is deleted', async () => {
    server = await startInProcess();
    const key = await newKey(server, 'erin', {});
    expect((await use(server, key, 'erin')).status).toBe(200);
    expect(server.activity.lastUsed('erin')).toBeDefined();
    expect((await server.fetch(`${server.api}/ownedaccesskeys/erin`, { method: 'DELETE' })).status).toBe(200);
    await eventually('the deleted key is forgotten', () => server!.activity.lastUsed('erin') === undefined);
    // Only the administrator's own use is remembered now.
    expect(server.activity.size).toBe(1);
  });

  it('a key with ttl 1 is served within its second and refused after it', async () => {
    const clock = new ManualClock('2026-11-27T10:00:00Z');
    server = await startInProcess({ now: clock.now });
    const key = await newKey(server, 'brief', { ttl: 1 });
    expect((await use(server, key, 'brief')).status).toBe(200);
    clock.advance(900);
    expect((await use(server, key, 'brief')).status).toBe(200);
    clock.advance(1200);
    expect(await use(server, key, 'brief')).toEqual({ status: 401, message: 'access key expired' });
  });

  it('ttlAfterLastActivity extends the life of a key in use, and records status.lastActivity', async () => {
    const clock = new ManualClock('2026-11-27T10:00:00Z');
    server = await startInProcess({ activityIntervalMs: 500, now: clock.now });
    const key = await newKey(server, 'busy', { ttl: 2, ttlAfterLastActivity: true });
    const fixed = await newKey(server, 'fixed', { ttl: 2 });
    for (let i = 0; i < 4; i++) {
      expect((await use(server, key, 'busy')).status).toBe(200);
      clock.advance(900);
    }
    // 3.6 s after creation: the busy key lives on, the fixed one (same ttl) is gone.
    expect((await use(server, key, 'busy')).status).toBe(200);
    expect((await use(server, fixed, 'fixed')).status).toBe(401);
    // The last use (at 3.6 s) is written to status.lastActivity, off the request path.
    const read = async () => ((await (await server!.fetch(`${server!.api}/ownedaccesskeys/busy`)).json()) as { status?: { lastActivity?: string } }).status?.lastActivity;
    await eventually('status.lastActivity records the last use (10:00:03)', async () => Date.parse((await read()) ?? '') >= Date.parse('2026-11-27T10:00:03Z'));
    clock.advance(2600);
    expect(await use(server, key, 'busy')).toEqual({ status: 401, message: 'access key expired' });
  });

  it('a server-wide maximum ttl refuses longer-lived and never-expiring keys with 422', async () => {
    server = await startInProcess({ maxTtlSeconds: 3600 });
    for (const spec of [{ ttl: 7200 }, {}]) {
      const res = await create(server, 'ownedaccesskeys', { metadata: { name: 'long' }, spec: { user: 'x', ...spec } });
      const body = (await res.json()) as { details: { causes: { field: string; message: string }[] } };
      expect(res.status).toBe(422);
      expect(body.details.causes[0]).toMatchObject({ field: 'spec.ttl' });
      expect(body.details.causes[0]!.message).toContain("must be between 1 and 3600 seconds (the server's maximum ttl)");
    }
    expect((await create(server, 'ownedaccesskeys', { metadata: { name: 'ok' }, spec: { user: 'x', ttl: 60 } })).status).toBe(201);
  });

  it('deletes keys that expired longer ago than the retention period, and only those', async () => {
    server = await startInProcess();
    await newKey(server, 'old', { ttl: 60 });
    await newKey(server, 'forever', {});
    const activity = new ActivityRecorder(server.registry.ownedaccesskeys, 60_000, pino({ level: 'silent' }));
    const keys = server.registry.ownedaccesskeys;
    expect(await removeExpiredKeys(keys, activity, new Date(Date.now() + 120_000), 3600)).toEqual([]);
    expect(await removeExpiredKeys(keys, activity, new Date(Date.now() + 60_000 + 3601_000), 3600)).toEqual(['old']);
    expect((await keys.list()).items.map((k) => k.metadata.name)).toEqual(['admin', 'forever']);
  });

  it('two keys cannot share a value', async () => {
    server = await startInProcess();
    const value = 'S'.repeat(40);
    expect((await create(server, 'ownedaccesskeys', { metadata: { name: 'one' }, spec: { user: 'a', key: value } })).status).toBe(201);
    const res = await create(server, 'ownedaccesskeys', { metadata: { name: 'two' }, spec: { user: 'b', key: value } });
    const body = await res.text();
    expect(res.status).toBe(422);
    expect(body).toContain('this key value is already in use');
    expect(body).not.toContain(value);
  });
});
