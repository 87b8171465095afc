/**
 * Reads where the everyday list tests do not go: the resourceVersion and continue options kube
 * refuses (its words), a list at a compacted revision, a keyHash selector (the cache cannot answer
 * it: it keeps the sealed values apart), a GET from a cache that keeps nothing apart, and the time
 * index read without a cache (an instant equal to the bound is due).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/api/secrets.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { accessKey, newRegistry, statusOf, team } from './helpers.js';

describe('list options kube refuses', () => {
  // Made in the hooks, not while the file is collected: code run then is no test's (docs/mutation-testing.md).
  let registry: ReturnType<typeof newRegistry>['registry'];
  let store: ReturnType<typeof newRegistry>['store'];
  beforeAll(async () => {
    ({ registry, store } = newRegistry());
    for (const t of ['a', 'b', 'c']) await registry.teams.create(team(t));
  });

  it.each([
    [{ resourceVersionMatch: 'Newest' }, 'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan"'],
    [{ resourceVersionMatch: 'Exact' }, 'resourceVersionMatch "Exact" needs a resourceVersion other than "0"'],
    [{ continue: 'eyJ9', resourceVersion: '2' }, 'specifying resource version is not allowed when using continue'],
  ])('%j: 400 BadRequest', async (opts, message) => {
    expect(await statusOf(registry.teams.list(opts))).toMatchObject({ code: 400, reason: 'BadRequest', message });
  });

  it('a list at a compacted revision: 410 Expired, saying the resourceVersion is too old', async () => {
    const head = Number((await registry.teams.list()).metadata.resourceVersion);
    await store.compact(head);
    const status = await statusOf(registry.teams.list({ resourceVersion: '1', resourceVersionMatch: 'Exact' }));
    expect(status).toMatchObject({ code: 410, reason: 'Expired' });
    expect(status.message).toMatch(/^The resourceVersion for the provided list is too old: /);
  });
});

describe('reads from the watch cache', () => {
  let store: CachedStore;
  let registry: ReturnType<typeof newRegistry>['registry'];
  const value = `CustomValue${'v'.repeat(40)}`;
  beforeAll(async () => {
    store = new CachedStore(new MemoryStore()).start();
    ({ registry } = newRegistry({ store }));
    await registry.ownedaccesskeys.create(accessKey('mine', { user: 'ana', key: value }));
    await registry.ownedaccesskeys.create(accessKey('other', { user: 'bo' }));
    expect(await store.ready()).toBe(true);
  });
  afterAll(() => store.close());

  it('a keyHash selector is left to the store, which finds the key by its value', async () => {
    const opts = { fieldSelector: `keyHash=${hashKey(value)}` };
    expect(await registry.ownedaccesskeys.listJson(opts, true)).toBeUndefined();
    expect((await registry.ownedaccesskeys.list(opts)).items.map((k) => k.metadata.name)).toEqual(['mine']);
  });

  it('a GET from a cache that keeps no property apart is the object as the ordinary path presents it', async () => {
    const plain = new CachedStore(new MemoryStore(), { apart: undefined }).start();
    try {
      const { registry: r } = newRegistry({ store: plain });
      await r.teams.create(team('t', { users: ['ana'] }));
      expect(await plain.ready()).toBe(true);
      const cached = await r.teams.getJson('t');
      expect(cached?.json.toString()).toBe(`${JSON.stringify(await r.teams.get('t'))}\n`);
    } finally {
      await plain.close();
    }
  });
});

describe('the time index read without a cache', () => {
  it('an instant equal to the bound is due; one after it is not', async () => {
    const { registry, clock } = newRegistry();
    await registry.ownedaccesskeys.create(accessKey('first', { user: 'ana' }));
    const at = clock.time;
    clock.advance(10);
    await registry.ownedaccesskeys.create(accessKey('second', { user: 'ana' }));
    const due = async (ms: number) => (await registry.ownedaccesskeys.dueBy('lastUse', ms)).map((k) => k.metadata.name);
    expect(await due(at)).toEqual(['first']);
    expect(await due(at - 1)).toEqual([]);
  });
});
