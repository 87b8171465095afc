/**
 * The request paths that used to read every access key now read the watch cache's indexes: a key
 * create (the keys-per-holder quota), a team's keys, a delete (the dependents check) and a
 * sign-in's mint (both username checks) walk no range of keys and scan nothing, and still answer
 * as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { mintLoginKey } from '../../src/signin/mint.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

describe('request paths over many keys', () => {
  const store = new CachedStore(new MemoryStore());
  let server: InProcess;
  let walks: string[] = [];
  const json = { 'Content-Type': 'application/json' };
  const post = (body: unknown) => server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify(body) });

  beforeAll(async () => {
    server = await startInProcess({ store, garbageCollector: false });
    await server.fetch(`${server.api}/teams`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'ops' }, spec: { displayName: 'Ops' } }) });
    for (let i = 0; i < 30; i++) expect((await post({ metadata: { name: `k${i}` }, spec: i % 3 ? { user: `u${i % 4}` } : { team: 'ops' } })).status).toBe(201);
    // Count every walk of a range of keys and every scan from here on.
    for (const method of ['cachedRange', 'scan', 'list'] as const) {
      const original = (store[method] as (...a: unknown[]) => unknown).bind(store);
      (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        if (String(args[0]).startsWith('/ownedaccesskeys/')) walks.push(method);
        return original(...args);
      };
    }
  });
  afterAll(() => server.close());

  it('a key create counts the holder quota from the holder index, with no walk of the keys', async () => {
    walks = [];
    expect((await post({ metadata: { name: 'new-one' }, spec: { user: 'u1' } })).status).toBe(201);
    expect(walks).toEqual([]);
  });

  it("teams/<name>/accesskeys lists the team's keys from the team index", async () => {
    walks = [];
    const res = await server.fetch(`${server.api}/teams/ops/accesskeys`);
    expect(res.status).toBe(200);
    const names = ((await res.json()) as { accessKeys: { metadata: { name: string } }[] }).accessKeys.map((k) => k.metadata.name);
    expect(names).toEqual(['k0', 'k12', 'k15', 'k18', 'k21', 'k24', 'k27', 'k3', 'k6', 'k9']);
    expect(walks).toEqual([]);
  });

  it('a delete finds the dependents by the owner index', async () => {
    walks = [];
    expect((await server.fetch(`${server.api}/ownedaccesskeys/k1`, { method: 'DELETE' })).status).toBe(200);
    expect(walks).toEqual([]);
  });

  it("a sign-in's mint checks the username by the holder index, and still refuses a name held outside sign-in", async () => {
    walks = [];
    const mint = (username: string) =>
      mintLoginKey(server.registry, { username, identity: { connector: 'c', userId: `id-${username}` }, ttlSeconds: 3600, requester: { username: 'test' }, via: 'test', unprefixed: true }, new Date());
    expect((await mint('fresh')).user).toBe('fresh');
    await expect(mint('u2')).rejects.toMatchObject({ code: 403 });
    expect(walks).toEqual([]);
  });
});
