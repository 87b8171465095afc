/**
 * A view of a store whose writes carry the fence of background work (fence.ts): the same store,
 * cache and watches underneath, and each create, update, delete, compaction and scrub made through
 * it passes `fenceOf()` at the moment of the write. Reads pass through unchanged.
 */
import type { FenceOf } from './fence.js';
import type { ListOptions, Preconditions, ScanFilter, Store, StoredObject, TryUpdate, WriteOptions, Indexer } from './types.js';

export function fencedStore(store: Store, fenceOf: FenceOf): Store {
  const fence = () => ({ fence: fenceOf() });
  const view: Store = {
    // The indexer is the store's own, installed once by the registry over the store itself.
    setIndexer: (indexer: Indexer) => store.setIndexer(indexer),
    getByIndex: (prefix, value) => store.getByIndex(prefix, value),
    get: (key) => store.get(key),
    list: (prefix, opts?: ListOptions) => store.list(prefix, opts),
    scan: <T extends StoredObject>(prefix: string, mightMatch: ScanFilter, pageSize?: number) => store.scan<T>(prefix, mightMatch, pageSize),
    watch: (prefix, fromRevision) => store.watch(prefix, fromRevision),
    currentRevision: () => store.currentRevision(),
    compactedRevision: () => store.compactedRevision(),
    ping: () => store.ping(),
    // The store is the server's: a view closes nothing.
    close: async () => {},
    create: <T extends StoredObject>(key: string, obj: T, opts?: WriteOptions<T>) => store.create(key, obj, { ...opts, ...fence() }),
    guaranteedUpdate: <T extends StoredObject>(key: string, pre: Preconditions | undefined, tryUpdate: TryUpdate<T>, opts?: WriteOptions<T>) =>
      store.guaranteedUpdate(key, pre, tryUpdate, { ...opts, ...fence() }),
    delete: <T extends StoredObject>(key: string, pre?: Preconditions, opts?: WriteOptions<T>) => store.delete<T>(key, pre, { ...opts, ...fence() }),
    scrubHistory: (key: string, property: string) => store.scrubHistory(key, property, fence()),
    compact: (revision: number) => store.compact(revision, fence()),
  };
  const cache = store.cache?.bind(store);
  return cache ? { ...view, cache } : view;
}
