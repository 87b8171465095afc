/**
 * Sweeps over the watch cache's state (the collector, the key sweeps, the refresher): objects
 * decoded one at a time as the sweep reaches them, never a whole kind held at once, and paced so
 * that a sweep over a million objects does not keep requests waiting until it is through them.
 */
import { Pace } from '../../background/pace.js';
import { prefixEnd, scanTest, type ScanFilter, type StoredObject } from '../types.js';
import { bytesOf, type CacheState, type Entry } from './cache-state.js';

/**
 * A scan's step (background/pace.ts): a key looked at and passed over (its JSON searched) counts
 * 1, a key decoded and given to the caller, who works on it, 10; about a millisecond of work.
 */
const scanStep = 1000;
const givenWeight = 10;

/** The objects under prefix whose JSON might match, key by key, in paced steps. */
export async function* scanState<T extends StoredObject>(state: CacheState, prefix: string, mightMatch: ScanFilter): AsyncGenerator<T> {
  // Both JSONs in one string: a match across their seam is a false positive, which callers allow.
  const test = scanTest(mightMatch);
  const mightHold = (e: Entry | undefined) => e !== undefined && test(bytesOf(e).toString());
  // Key by key (a range resumes after the last key it gave when the cache changes meanwhile).
  const pace = new Pace(scanStep);
  for (const key of state.range(prefix, prefixEnd(prefix), '')) {
    const obj = mightHold(state.entry(key)) ? state.get<T>(key) : undefined;
    if (obj) yield obj;
    if (pace.counted(obj ? givenWeight : 1)) await pace.pause();
  }
}

/**
 * The keys' objects decoded one at a time as the sweep reaches them, each read from the cache's
 * state of that moment (`current`: after a refill, the new one), so a key removed meanwhile is skipped.
 */
export function* decodedInTurn<T extends StoredObject>(current: () => CacheState, keys: string[]): Generator<T> {
  for (const k of keys) {
    const obj = current().get<T>(k);
    if (obj) yield obj;
  }
}
