/**
 * Two replicas on one SQLite file: a change written through one is seen by the other's very next
 * request, with no `eventually`, although the other has already remembered the key's identity
 * (auth/authenticate.ts keeps identities per key version and team-index generation; each request
 * reads the store's revision and waits for its cache and team index to reach it). Written by a
 * review of the caches on the authentication path (stop 53), which found them sound.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { ManualClock } from '../support/clock.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const merge = { 'Content-Type': 'application/merge-patch+json' };

describe('the next request after a change made through another replica', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-next-request-'));
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sees a team’s roles and members, a key disabled and its ttl passing, every time', async () => {
    const clock = new ManualClock('2026-11-27T10:00:00Z');
    const replica = async () => {
      // Polling each second: the other replica's writes reach this one's watch late, never its next request.
      const s = await startInProcess({ now: clock.now, store: new CachedStore(new SqliteStore(join(dir, 'db'), { pollIntervalMs: 1000 })) });
      closers.unshift(() => s.close());
      return s;
    };
    const a = await replica();
    const b = await replica();
    const post = async (s: InProcess, plural: string, body: unknown) => {
      const r = await s.fetch(`${s.api}/${plural}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
      expect(r.status, await r.clone().text()).toBe(201);
      return (await r.json()) as { spec: { key: string } };
    };
    const patch = async (path: string, body: unknown) => expect((await a.fetch(`${a.api}/${path}`, { method: 'PATCH', headers: merge, body: JSON.stringify(body) })).status).toBe(200);
    await post(a, 'teams', { metadata: { name: 'ops-x' }, spec: { users: ['rita'], clusterRoles: [{ name: 'teams-viewer' }] } });
    await post(a, 'teams', { metadata: { name: 'other' }, spec: {} });
    const key = (await post(a, 'ownedaccesskeys', { metadata: { name: 'rita-key' }, spec: { user: 'rita', ttl: 3600 } })).spec.key;
    const status = async (s: InProcess) => (await s.fetch(`${s.api}/teams/other`, { headers: { Authorization: `Bearer ${key}` } })).status;
    // B remembers rita's identity.
    for (let i = 0; i < 3; i++) expect(await status(b)).toBe(200);
    await patch('teams/ops-x', { spec: { clusterRoles: [] } });
    expect(await status(b)).toBe(403);
    await patch('teams/ops-x', { spec: { clusterRoles: [{ name: 'teams-viewer' }] } });
    expect(await status(b)).toBe(200);
    await patch('teams/ops-x', { spec: { users: [] } });
    expect(await status(b)).toBe(403);
    await patch('teams/ops-x', { spec: { users: ['rita'] } });
    expect(await status(b)).toBe(200);
    await patch('ownedaccesskeys/rita-key', { spec: { disabled: true } });
    expect(await status(b)).toBe(401);
    await patch('ownedaccesskeys/rita-key', { spec: { disabled: false } });
    expect(await status(b)).toBe(200);
    clock.advance(3_601_000);
    expect(await status(b)).toBe(401);
    expect(await status(a)).toBe(401);
  });
});
