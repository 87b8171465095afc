/**
 * A stored object of a shape the schema would refuse (written past the API: a restore, another
 * tool) does not stop the watch cache: its index functions give it no values instead of throwing,
 * and the cache stays filled and following the store.
 */
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';

describe('the watch cache and malformed objects', () => {
  it('stays ready and serves from memory when a Team has an access that is no list, or a key ownerReferences that is none', async () => {
    const cache = new CachedStore(new MemoryStore(), { retryMs: 5 });
    const registry = createRegistry(cache);
    try {
      expect(await cache.start().ready(5000)).toBe(true);
      await cache.create('/teams/bad', { metadata: { uid: 'uid-bad' }, spec: { access: {} } } as never);
      await cache.create('/teams/good', { metadata: { uid: 'uid-good' }, spec: { owner: { user: 'ann' } } } as never);
      expect(await cache.ready(1000)).toBe(true);
      // Served by the cache (it vouches for the current revision), both of them.
      const range = await cache.cachedRange('/teams/');
      expect(range && [...range.entries].map(([key]) => key)).toEqual(['/teams/bad', '/teams/good']);
      expect((await registry.teams.byField('references', 'u:ann')).map((t) => t.metadata.uid)).toEqual(['uid-good']);
      // Any index function, not only that one: an access key whose ownerReferences is no list.
      await cache.create('/ownedaccesskeys/odd', { metadata: { uid: 'uid-odd', ownerReferences: 'team-x' }, spec: { user: 'ann' } } as never);
      expect(await cache.ready(1000)).toBe(true);
      expect((await registry.ownedaccesskeys.byField('holder', 'ann')).map((k) => k.metadata.uid)).toEqual(['uid-odd']);
      // An index function that answers with no name at all: a number where the user goes. It is in
      // no holder's index; a list where the team goes is not in the holder index as `team:a,b`.
      await cache.create('/ownedaccesskeys/number', { metadata: { uid: 'uid-number' }, spec: { user: 5 } } as never);
      await cache.create('/ownedaccesskeys/list', { metadata: { uid: 'uid-list' }, spec: { team: ['a', 'b'] } } as never);
      expect(await cache.ready(1000)).toBe(true);
      expect(await registry.ownedaccesskeys.byField('holder', 'team:a,b')).toEqual([]);
      expect((await registry.ownedaccesskeys.byField('holder', 'ann')).map((k) => k.metadata.uid)).toEqual(['uid-odd']);
    } finally {
      await cache.close();
    }
  });
});
