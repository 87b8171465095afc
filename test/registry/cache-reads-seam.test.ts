/**
 * The registry finds the watch cache's reads through the Store interface (`store.cache?.()`,
 * src/store/cache-reads.ts), not by the cache's class: a store that wraps the cache and hands its
 * reads on keeps the indexed lookups and the cached GET, and one that does not hand them on is
 * answered by the store, alike.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import type { Store } from '../../src/store/types.js';
import { accessKey, newRegistry, team } from './helpers.js';

const methods = ['setIndexer', 'getByIndex', 'create', 'get', 'list', 'guaranteedUpdate', 'delete', 'watch', 'currentRevision', 'compactedRevision', 'scrubHistory', 'compact', 'ping', 'close'] as const;

/** A store in front of `inner` (as a metrics or fault-injecting layer would be), counting its scans; `withCache` hands the cache's reads on. */
function wrapping(inner: CachedStore, withCache: boolean): { store: Store; scans: () => number } {
  let scans = 0;
  const store: Record<string, unknown> = {};
  for (const m of methods) store[m] = (...args: unknown[]) => (inner[m] as (...a: unknown[]) => unknown).apply(inner, args);
  store.scan = (...args: Parameters<Store['scan']>) => {
    scans++;
    return inner.scan(...args);
  };
  if (withCache) store.cache = () => inner.cache();
  return { store: store as unknown as Store, scans: () => scans };
}

describe("the watch cache's reads through the Store interface", () => {
  let inner: CachedStore;
  afterEach(() => inner.close());

  for (const withCache of [true, false]) {
    it(withCache ? 'a wrapper that hands the cache on: lookups by index and GET come from the cache, no scan' : 'a wrapper without the cache: the same answers, from the store', async () => {
      inner = new CachedStore(new MemoryStore()).start();
      const { store, scans } = wrapping(inner, withCache);
      const { registry } = newRegistry({ store });
      await registry.teams.create(team('payments', { users: ['ana'] }));
      await registry.ownedaccesskeys.create(accessKey('ana-laptop', { user: 'ana' }));
      expect(await inner.ready()).toBe(true);
      const held = await registry.ownedaccesskeys.byField('holder', 'ana');
      expect(held.map((k) => k.metadata.name)).toEqual(['ana-laptop']);
      const json = await registry.teams.getJson('payments');
      expect(scans()).toBe(withCache ? 0 : 1);
      expect(json === undefined).toBe(!withCache);
      if (json) expect(json.object().metadata.name).toBe('payments');
    });
  }
});
