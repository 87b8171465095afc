/** Filling the watch cache: one list at one revision, then a watch from it. */
import type { Indexer, StoreWatch } from '../types.js';
import type { CacheableStore } from './cached-store.js';
import { CacheState } from './cache-state.js';
import type { CacheIndexers } from './field-index.js';

const fillPageSize = 1000;

/**
 * Reads every object at one revision (pages of stored rows, no decoding by the store) into a new
 * state, and starts the watch from that revision; `onWatch` hears of the watch as soon as it exists.
 */
export async function fill(
  inner: CacheableStore,
  indexer: Indexer,
  apart: string | undefined,
  onWatch: (watch: StoreWatch) => void,
  indexers: CacheIndexers = {},
): Promise<{ state: CacheState; revision: number; watch: StoreWatch }> {
  const state = new CacheState(indexer, apart, indexers);
  const read = (after: string, revision?: number) => inner.listRows('/', { limit: fillPageSize, after, ...(revision === undefined ? {} : { revision }) });
  let page = await read('');
  const revision = page.revision;
  for (;;) {
    // The next page is read (in the store's reader thread) while this one is loaded here.
    const next = page.continueAfter === undefined ? undefined : read(page.continueAfter, revision);
    next?.catch(() => {}); // awaited below; a failure before then is not unhandled
    for (const row of page.rows) state.load(row.key, row.value, row.revision);
    if (!next) break;
    page = await next;
  }
  const watch = inner.watch('/', revision);
  onWatch(watch);
  await watch.started;
  return { state, revision, watch };
}

/** Freezes an object and everything in it: what the cache shares between callers cannot be changed by one. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
