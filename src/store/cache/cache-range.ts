/**
 * How the watch cache reads a range of its state: every key under a prefix after a position, in key
 * order, or, for a restricted reader whose filter says where its objects are, only the keys carrying
 * one of its index values (narrowed-keys.ts). Lazy: the caller takes the entries before its next
 * await, while the state is still the one read.
 */
import type { ListOptions } from '../types.js';
import type { CacheState, Entry } from './cache-state.js';
import { positionAfter, type NarrowedKeys } from './narrowed-keys.js';

export interface CachedRange {
  revision: number;
  /** The filled state the entries are of (a kept page body is of one state: page-bodies.ts). */
  fill: object;
  entries: Generator<[string, Entry]>;
  /** How many keys of the range follow `key`, counted without visiting them. */
  countAfter(key: string): number;
  /**
   * Whether the cache is still at `revision` in the same state: the entries are read lazily, and an
   * event applied between the range's making and its reading (in the awaits between them) would put
   * a newer object into a page labelled with the older revision (found by a review, not seen).
   */
  current(): boolean;
}

export function rangeOf(
  state: CacheState,
  narrowed: NarrowedKeys,
  prefix: string,
  end: string,
  revision: number,
  opts: Pick<ListOptions, 'after' | 'within'>,
): Omit<CachedRange, 'current'> {
  const after = opts.after ?? '';
  const keys = narrowed.keys(state, prefix, end, revision, opts.within?.());
  if (keys) {
    // Only the keys carrying one of the values: a reader who may see a few keys of a million
    // reads those few (their union, in key order), not the kind.
    const picked = keys.slice(positionAfter(keys, after));
    function* entries(): Generator<[string, Entry]> {
      for (const key of picked) {
        const entry = state.entry(key);
        if (entry) yield [key, entry];
      }
    }
    return { revision, fill: state, entries: entries(), countAfter: (key) => keys.length - positionAfter(keys, key) };
  }
  const range = state.range(prefix, end, after);
  function* entries(): Generator<[string, Entry]> {
    for (const key of range) yield [key, state.entry(key)!];
  }
  return { revision, fill: state, entries: entries(), countAfter: (key) => state.count(prefix, end, key) };
}
