/**
 * A scan of the watch cache (the background sweeps' read: the garbage collector's full pass, the
 * leaked-key and expiry sweeps) reads key by key and gives the event loop a turn every thousand
 * keys: a request arriving during a scan of many objects waits for one step, not the whole scan.
 * Before, the scan first tested every cached object's JSON in one go, then handed them out without
 * a turn, so a million-key cache held requests for seconds. Every matching object is still read once.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';

describe('a scan of the watch cache', () => {
  it('gives the event loop turns while it reads 3,000 objects, and reads each matching one once', async () => {
    const cache = new CachedStore(new MemoryStore()).start();
    try {
      expect(await cache.ready(5000)).toBe(true);
      const n = 3_000;
      for (let i = 0; i < n; i += 100) {
        await Promise.all(Array.from({ length: 100 }, (_, j) => cache.create(`/things/t${String(i + j).padStart(5, '0')}`, { metadata: { uid: `t${i + j}` }, spec: { odd: (i + j) % 2 === 1 } })));
      }
      const names: string[] = [];
      // A request arriving while the scan runs stands for this callback.
      let readAtTurn: number | undefined;
      setImmediate(() => (readAtTurn = names.length));
      for await (const o of cache.scan('/things/', (json) => json.includes('"odd":true'))) names.push(o.metadata!.uid!);
      expect(names).toHaveLength(n / 2);
      expect(new Set(names).size).toBe(n / 2);
      expect(readAtTurn).toBeGreaterThan(0);
      expect(readAtTurn).toBeLessThan(n / 2);
    } finally {
      await cache.close();
    }
  });
});
