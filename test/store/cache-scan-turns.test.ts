/**
 * A scan of the watch cache (the background sweeps' read: the garbage collector's full pass, the
 * key health sweep's search for the last admin key) reads key by key, in steps of about a
 * millisecond with a pause between them (background/pace.ts): a request arriving during a scan of
 * many objects waits for a step, not the whole scan. Before, the scan first tested every cached
 * object's JSON in one go, then handed them out without a turn, so a million-key cache held
 * requests for seconds; then it gave one bare turn every thousand keys, so each of a request's
 * several turns waited a step. Every matching object is still read once.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';

async function cacheOf(n: number): Promise<CachedStore> {
  const cache = new CachedStore(new MemoryStore()).start();
  expect(await cache.ready(5000)).toBe(true);
  for (let i = 0; i < n; i += 100) {
    await Promise.all(Array.from({ length: 100 }, (_, j) => cache.create(`/things/t${String(i + j).padStart(5, '0')}`, { metadata: { uid: `t${i + j}` }, spec: { odd: (i + j) % 2 === 1 } })));
  }
  return cache;
}

describe('a scan of the watch cache', () => {
  it('gives the event loop turns while it reads 3,000 objects, and reads each matching one once', async () => {
    const n = 3_000;
    const cache = await cacheOf(n);
    try {
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

  it("a request's several turns of the event loop go on between two steps of a scan, not one turn per step", async () => {
    const n = 6_000;
    const cache = await cacheOf(n);
    try {
      let read = 0;
      const scanning = (async () => {
        for await (const _ of cache.scan('/things/', (json) => json.includes('"odd":true'))) read++;
      })();
      await new Promise<void>((resolve) => {
        const check = () => (read > 0 ? resolve() : setImmediate(check));
        check();
      });
      // A request during the scan stands for these five turns (the revision read, the writer thread's answer...).
      const before = read;
      for (let turn = 0; turn < 5; turn++) await new Promise((r) => setImmediate(r));
      const meanwhile = read - before;
      await scanning;
      expect(read).toBe(n / 2);
      // A step is about 180 of these keys (half of them given): a step or two ran meanwhile. With a
      // bare turn every thousand keys, one ran per turn of the request: 2,500 objects given.
      expect(meanwhile).toBeLessThan(600);
    } finally {
      await cache.close();
    }
  });
});
