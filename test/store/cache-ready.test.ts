/**
 * Waiting for the watch cache's fill (`serve` waits up to two minutes before the lease and the
 * key health sweep start) is bounded on a monotonic clock: a wall clock stepped forward meanwhile
 * (NTP, a VM resumed) does not end the wait early, and the cache is ready when its fill is done.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the watch cache's ready wait", () => {
  it('is not cut short by the wall clock jumping an hour ahead', async () => {
    const inner = new MemoryStore();
    await inner.create('/teams/a', { metadata: { uid: 'a' } });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const listRows = inner.listRows.bind(inner);
    // The fill's first read waits until released: the cache stays Pending meanwhile.
    inner.listRows = async (...args: Parameters<typeof listRows>) => {
      await held;
      return listRows(...args);
    };
    const cache = new CachedStore(inner);
    try {
      const waiting = cache.ready(10_000);
      const wall = Date.now;
      vi.spyOn(Date, 'now').mockImplementation(() => wall() + 3_600_000);
      await new Promise((r) => setTimeout(r, 100));
      release();
      expect(await waiting).toBe(true);
    } finally {
      await cache.close();
    }
  });
});
