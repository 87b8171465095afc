/**
 * Restricted readers' candidate keys (cachedRange with `within`): the union of the keys carrying
 * one of a reader's field-index values, sorted, or undefined to read the whole range: an index not
 * kept, or candidates too many to be worth it (an eighth of the kind or more: reading the range
 * costs less than gathering and sorting them). The sorted keys are kept for the filled state and
 * revision they were read at, so a list's later pages (a scan asks for several per page, a client
 * for the rest) pick up where they were instead of gathering them again.
 */
import type { IndexLookup } from '../../api/selectors.js';
import type { CacheState } from './cache-state.js';
import { lowerBound } from './sorted-keys.js';

/** Candidate key sets kept for one revision: a few readers' at a time, the oldest going first. */
const kept = 16;

export class NarrowedKeys {
  private at: { fill: CacheState; revision: number; keys: Map<string, readonly string[]> } | undefined;

  keys(state: CacheState, prefix: string, end: string, revision: number, lookups: readonly IndexLookup[] | undefined): readonly string[] | undefined {
    if (!lookups || !lookups.every((l) => state.hasField(l.index))) return undefined;
    const total = lookups.reduce((n, l) => n + state.fieldSize(l.index, l.value), 0);
    if (total * 8 >= state.count(prefix, end, '')) return undefined;
    if (this.at?.fill !== state || this.at.revision !== revision) this.at = { fill: state, revision, keys: new Map() };
    const sets = this.at.keys;
    const id = `${prefix}\0${JSON.stringify(lookups)}`;
    let keys = sets.get(id);
    if (!keys) {
      keys = [...new Set(lookups.flatMap((l) => state.fieldLookup(l.index, prefix, end, l.value)))].sort();
      if (sets.size >= kept) sets.delete(sets.keys().next().value!);
      sets.set(id, keys);
    }
    return keys;
  }
}

/** The position in sorted `keys` of the first key after `key` (`key + '\0'` is its successor). */
export function positionAfter(keys: readonly string[], key: string): number {
  return lowerBound(keys, `${key}\0`);
}
