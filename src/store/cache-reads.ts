/**
 * What a store layer that keeps every object in memory (the watch cache, cache/cached-store.ts)
 * answers beside the Store interface: lookups by the indexes it keeps, and reads served from its
 * memory as bytes. The registry reaches them through `Store.cache?.()`, never by the layer's class,
 * so any store that can vouch for such reads may offer them. Each read answers undefined when the
 * cache cannot vouch for it now, and the caller then asks the store, which answers the same.
 */
import type { Entry } from './cache/cache-state.js';
import type { CacheIndexers } from './cache/field-index.js';
import type { CachedRange } from './cache/cache-range.js';
import type { ListOptions, ScanFilter, StoredObject } from './types.js';

export type { Entry as CachedEntry } from './cache/cache-state.js';
export type { CacheIndexers } from './cache/field-index.js';

export interface CacheReads {
  /** The top-level property each entry keeps apart from its JSON (the sealed secrets), if any. */
  readonly apart: string | undefined;
  /** Installs the field and time indexes the cache keeps, before it is used (the cache fills again under them). */
  setCacheIndexers(indexers: CacheIndexers): void;
  /** Objects under prefix whose value in the field index `name` is `value`, by a consistent read. */
  byField<T extends StoredObject>(prefix: string, name: string, value: string): Promise<T[] | undefined>;
  /**
   * Objects under prefix whose instant in the time index `name` is at or before `at` (a sweep's
   * read), in key order, each decoded as it is reached: a sweep over many holds one at a time.
   */
  dueBy<T extends StoredObject>(prefix: string, name: string, at: number): Promise<Iterable<T> | undefined>;
  /** byField as a sweep reads it: the cache as it is, in key order, each decoded as it is reached. */
  eachByField<T extends StoredObject>(prefix: string, name: string, value: string): Promise<Iterable<T> | undefined>;
  /**
   * The store's own scan, past the cache: what a consistent lookup reads when the cache cannot vouch
   * for it (the cache's scan serves a sweep from memory even while it lags behind the store).
   */
  scanStore<T extends StoredObject>(prefix: string, mightMatch: ScanFilter): AsyncGenerator<T>;
  /** The store's one secondary index, answered with the cache's shared frozen objects and the revision read at. */
  cachedByIndex<T extends StoredObject>(prefix: string, value: string): Promise<{ items: readonly Readonly<T>[]; revision: number } | undefined>;
  /** The cached entry of a key (null: no such object), when the cache is current with the store. */
  cachedEntry(key: string): Promise<Entry | null | undefined>;
  /**
   * The cached entries under prefix after `opts.after` (only those carrying one of `opts.within`'s
   * field-index values, when the cache narrows the read; `countAfter` then counts those), read
   * lazily at `revision`. `fill` is the
   * identity of the filled state read: a refill (after its watch ended) makes a new one, so with
   * `revision` it names what was read even if the store's revisions went back.
   */
  cachedRange(prefix: string, opts?: Pick<ListOptions, 'after' | 'revision' | 'within'>): Promise<CachedRange | undefined>;
}
