/**
 * The leader's work writes through the registry's fenced view (store/fence.ts), passed explicitly
 * rather than carried by AsyncLocalStorage: on a replica that does not lead, its writes are refused
 * before the store, while requests on the same replica write as ever.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { SqliteLease } from '../../src/store/backends/sqlite-lease.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import type { Fence } from '../../src/store/fence.js';
import type { StorageError } from '../../src/store/errors.js';
import { ManualClock } from '../support/clock.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const bobKey = `BobKey${'b'.repeat(58)}`;

describe("a registry's fenced view", () => {
  const team = (name: string) => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name }, spec: { users: ['carol'] } });

  it('refuses every write a fence refuses, with the fence told of each, and leaves the store as it was; reads and unfenced writes are the registry’s own', async () => {
    const store = new CachedStore(new MemoryStore()).start();
    const registry = createRegistry(store);
    try {
      await registry.teams.create(team('kept'), { fieldManager: 'test' });
      const refused: StorageError[] = [];
      const over: Fence = { token: 7, valid: () => false, refused: (err) => refused.push(err) };
      const fenced = registry.fencedBy(() => over);
      const revision = await registry.currentRevision();
      const writes: [string, () => Promise<unknown>][] = [
        ['create', () => fenced.teams.create(team('new'), { fieldManager: 'test' })],
        ['update', async () => fenced.teams.update('kept', { ...(await fenced.teams.get('kept')), spec: { users: ['dave'] } }, { fieldManager: 'test' })],
        ['patch', () => fenced.teams.patch('kept', 'merge', { spec: { users: ['erin'] } }, { fieldManager: 'test' })],
        ['delete', () => fenced.teams.delete('kept', {})],
        ['compact', () => fenced.store.compact(revision)],
      ];
      for (const [verb, write] of writes) {
        const err = await write().then(() => undefined, (e: unknown) => e);
        expect(String(err), verb).toMatch(/refused a background write with fencing token 7: this replica's background-work lease is over or overdue/);
      }
      expect(refused).toHaveLength(writes.length);
      // Nothing was written: the revision is the same and the Team is as created; the view reads it alike.
      expect(await registry.currentRevision()).toBe(revision);
      expect(((await fenced.teams.get('kept')) as { spec: unknown }).spec).toEqual({ users: ['carol'] });
      expect(await fenced.teams.get('kept')).toEqual(await registry.teams.get('kept'));
      // The registry itself (requests) carries no fence, and a view without one (a lease without tokens) writes.
      await registry.teams.patch('kept', 'merge', { spec: { users: ['frank'] } }, { fieldManager: 'test' });
      await registry.fencedBy(() => undefined).teams.create(team('unfenced'), { fieldManager: 'test' });
      expect((await registry.teams.list({})).items.map((t) => t.metadata!.name)).toEqual(['kept', 'unfenced']);
    } finally {
      await store.close();
    }
  });
});

describe('the leader’s work on a replica that does not lead', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-fenced-background-'));
  const clock = new ManualClock('2026-11-29T10:00:00Z');
  // Another replica holds the lease (a real SQLite lease, renewed), so this server's leader only tries.
  const other = new SqliteLease(join(dir, 'lease.db'), { ttlMs: 2_000 });
  let server: InProcess;
  const make = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await server.fetch(`${server.api}/${path}`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as { metadata: { name: string }; status?: { conditions?: unknown[] } };
  };

  beforeAll(async () => {
    expect(await other.tryAcquire()).toBe(true);
    server = await startInProcess({ now: clock.now, lease: new SqliteLease(join(dir, 'lease.db'), { ttlMs: 2_000 }) });
  });
  afterAll(async () => {
    await server.close();
    await other.release();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes nothing: the AccessRequest expiry sweep is refused and the request stays Active, while requests write as ever', async () => {
    await make('teams', { metadata: { name: 'payments' }, spec: { owner: { user: 'bob' }, users: ['carol'] } });
    await make('ownedaccesskeys', { metadata: { name: 'bob-key' }, spec: { user: 'bob', key: bobKey } });
    const mine = await make('accessrequests', { metadata: { name: 'alice-req' }, spec: { user: 'alice', team: 'payments', duration: '1h', reason: 'INC-1' } });
    const approved = await server.fetch(`${server.api}/accessrequests/${mine.metadata.name}/approval`, {
      method: 'PUT',
      headers: { ...json, Authorization: `Bearer ${bobKey}` },
      body: JSON.stringify({ ...mine, status: { ...mine.status, conditions: [...(mine.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'ByHand', message: 'ok' }] } }),
    });
    expect(approved.status, await approved.clone().text()).toBe(200);
    clock.advance(3_600_000 + 1_000);
    // Due, and the sweep finds it, but its write carries the fence of a replica that does not lead.
    await expect(server.accessRequestExpiry.sweep()).rejects.toThrow(/refused a background write with fencing token 0/);
    const stored = (await (await server.fetch(`${server.api}/accessrequests/alice-req`)).json()) as { status: { phase: string } };
    expect(stored.status.phase).toBe('Active');
    // The request path of the same replica is not fenced.
    await make('teams', { metadata: { name: 'after' }, spec: { users: ['carol'] } });
  });
});
