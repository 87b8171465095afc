/**
 * A watch from a revision the store has not reached waits for it (as kube's cacher does without
 * sendInitialEvents); it must not drag the one shared log tail past the store's current revision,
 * or every other watcher of the process (the watch cache, the team index, other API watches)
 * stops hearing of writes.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import type { StoreEvent, StoreWatch } from '../../src/store/types.js';

/** The next event of a watch, or undefined after `ms`. */
async function nextEvent(w: StoreWatch, ms = 2000): Promise<StoreEvent | undefined> {
  const it = w[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)));
  const next = await Promise.race([it.next(), timeout]);
  clearTimeout(timer);
  return next && !next.done ? next.value : undefined;
}

describe('a watch from a future revision', () => {
  it('does not freeze the shared tail: a later watcher from the past sees a new write, and the future watcher waits for its revision', async () => {
    const store = new MemoryStore();
    try {
      await store.create('/x/one', { metadata: {} });
      const future = store.watch('/a', 1e12);
      await future.started;
      const everything = store.watch('/', 0);
      await everything.started;
      expect((await nextEvent(everything))?.key).toBe('/x/one'); // history from 0
      await store.create('/b', { metadata: {} });
      expect((await nextEvent(everything))?.key).toBe('/b');
      expect(everything.progress()).toBe(2);
      // The future watch examined nothing: every revision so far is at or below the one it asked for.
      expect(future.progress()).toBe(1e12);
      future.stop();
      everything.stop();

      // Once the future watcher has left, a new watcher (the tail is idle again) still follows the log.
      const later = store.watch('/', await store.currentRevision());
      await later.started;
      await store.create('/c', { metadata: {} });
      expect((await nextEvent(later))?.key).toBe('/c');
      later.stop();
    } finally {
      await store.close();
    }
  });

  it('the future watcher gets the events after its revision once the store reaches it', async () => {
    const store = new MemoryStore();
    try {
      const future = store.watch('/', 2);
      await future.started;
      const other = store.watch('/', 0);
      await other.started;
      await store.create('/r1', { metadata: {} });
      await store.create('/r2', { metadata: {} });
      await store.create('/r3', { metadata: {} });
      const got = await nextEvent(future);
      expect(got?.key).toBe('/r3');
      expect(got?.revision).toBe(3);
      expect((await nextEvent(other))?.revision).toBe(1);
      future.stop();
      other.stop();
    } finally {
      await store.close();
    }
  });
});
