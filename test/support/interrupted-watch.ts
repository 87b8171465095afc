import type { StoredObject, StoreWatch } from '../../src/store/types.js';

/**
 * A store watch that also ends when `interrupt` settles: a clean end when it resolves (the watch
 * finished by itself), the error when it rejects (a dropped connection). Tests of what follows a
 * watch's end use it over a real store instead of faking the watch.
 */
export function interruptedWatch<T extends StoredObject>(inner: StoreWatch<T>, interrupt: Promise<IteratorResult<never>>): StoreWatch<T> {
  return {
    stop: () => inner.stop(),
    started: inner.started,
    progress: () => inner.progress(),
    async *[Symbol.asyncIterator]() {
      const it = inner[Symbol.asyncIterator]();
      for (;;) {
        const next = await Promise.race([it.next(), interrupt]);
        if (next.done) return;
        yield next.value;
      }
    },
  };
}
