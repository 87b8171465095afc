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

  it('a page whose cache moved on between the range and its reading (a write applied in the awaits between) is answered by the store at one revision, not a newer object under the older revision', async () => {
    inner = new CachedStore(new MemoryStore()).start();
    const cache = inner.cache();
    let writeBetween: (() => Promise<void>) | undefined;
    const cachedRange = async (...args: Parameters<typeof cache.cachedRange>) => {
      const range = await cache.cachedRange(...args);
      const write = writeBetween;
      writeBetween = undefined;
      await write?.();
      return range;
    };
    /** `target` with `name` replaced, its other methods its own. */
    const replacing = <T extends object>(target: T, name: string, value: unknown): T =>
      new Proxy(target, { get: (t, p) => (p === name ? value : typeof Reflect.get(t, p) === 'function' ? (Reflect.get(t, p) as (...a: unknown[]) => unknown).bind(t) : Reflect.get(t, p)) });
    const store = replacing(inner, 'cache', () => replacing(cache, 'cachedRange', cachedRange));
    const { registry } = newRegistry({ store });
    await registry.teams.create(team('a'));
    expect(await inner.ready()).toBe(true);
    writeBetween = async () => {
      await registry.teams.create(team('b'));
    };
    const body = JSON.parse((await registry.teams.listJson({}, true))?.toString() ?? 'null') as { metadata: { resourceVersion: string }; items: { metadata: { name: string; resourceVersion: string } }[] } | null;
    // Either the cache declined (the store answers) or the page is whole at its own revision: never b under a's revision.
    if (body) for (const item of body.items) expect(Number(item.metadata.resourceVersion)).toBeLessThanOrEqual(Number(body.metadata.resourceVersion));
    const listed = await registry.teams.list({});
    expect(listed.items.map((t) => t.metadata.name)).toEqual(['a', 'b']);
    for (const item of listed.items) expect(Number(item.metadata.resourceVersion)).toBeLessThanOrEqual(Number(listed.metadata.resourceVersion));
  });
});

