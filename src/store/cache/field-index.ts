/**
 * The lookups the watch cache keeps beside its objects, as kube-apiserver's cacher keeps its
 * indexers: a field index maps each value an object carries to the keys of the objects carrying
 * it, a time index orders keys by one instant each. Both are maintained on every fill and watch
 * event, so a lookup costs the answer's size, never a walk of the cache. Invariant: after each
 * applied event, `lookup(v)` holds exactly the cached keys whose indexer gives `v`.
 */
import type { StoredObject } from '../types.js';

/** The values of an object for one field index (none: not in it). */
export type FieldIndexer = (key: string, obj: StoredObject) => readonly string[] | string | undefined;
/** The instant (epoch ms) of an object for one time index (undefined: not in it). */
export type TimeIndexer = (key: string, obj: StoredObject) => number | undefined;

/** Every lookup the cache keeps, by name. */
export interface CacheIndexers {
  fields?: Readonly<Record<string, FieldIndexer>>;
  times?: Readonly<Record<string, TimeIndexer>>;
}

/**
 * An indexer's answer as a list of distinct values; only strings count (an object of a shape the
 * schema would refuse, a number where a name goes, is not indexed by it, rather than stopping the
 * cache, and the fallback's filter reads it the same way).
 */
export function fieldValues(values: ReturnType<FieldIndexer> | unknown): readonly string[] {
  if (typeof values === 'string') return [values];
  if (!Array.isArray(values)) return [];
  const strings = values.every((v) => typeof v === 'string') ? (values as string[]) : values.filter((v): v is string => typeof v === 'string');
  return strings.length < 2 ? strings : [...new Set(strings)];
}

/**
 * Keys held together in an array, up to this many, before a Set: 100,000 keys in groups of ten (a
 * user's keys, a team's keys) took 3.9 MiB of heap as arrays and 5.8 MiB as Sets (a Set's hash table
 * has room for more). Adding or removing copies the array, at most this many pointers; `concat`
 * makes it exactly as long as it holds (a spread leaves room to grow: 5.5 MiB).
 */
const arrayMax = 32;

/**
 * Value -> keys; a bare string while one key holds the value (the common case), an array while few
 * do, a Set beyond. Arrays are never changed in place: a lookup's copy and the index share none.
 */
export class FieldIndex {
  private readonly byValue = new Map<string, string | readonly string[] | Set<string>>();

  add(key: string, value: string): void {
    const held = this.byValue.get(value);
    if (held === undefined || held === key) this.byValue.set(value, key);
    else if (typeof held === 'string') this.byValue.set(value, [held, key]);
    else if (held instanceof Set) held.add(key);
    else if (!held.includes(key)) this.byValue.set(value, held.length < arrayMax ? held.concat(key) : new Set([...held, key]));
  }

  delete(key: string, value: string): void {
    const held = this.byValue.get(value);
    if (held === key) this.byValue.delete(value);
    else if (held instanceof Set) {
      held.delete(key);
      if (held.size === 1) this.byValue.set(value, held.values().next().value!);
    } else if (Array.isArray(held) && held.includes(key)) {
      const rest = held.filter((k) => k !== key);
      this.byValue.set(value, rest.length === 1 ? rest[0]! : rest);
    }
  }

  /** How many keys carry `value`. */
  size(value: string): number {
    const held = this.byValue.get(value);
    return held === undefined ? 0 : typeof held === 'string' ? 1 : held instanceof Set ? held.size : held.length;
  }

  /** The keys carrying `value`, unordered. */
  lookup(value: string): readonly string[] {
    const held = this.byValue.get(value);
    if (held === undefined) return [];
    return typeof held === 'string' ? [held] : [...held];
  }
}

/** Width of a time bucket: lookups visit whole buckets, then test each key's own instant. */
const bucketMs = 60_000;

/**
 * Keys by instant, in buckets of a minute: `upTo(t)` visits the buckets up to t, not every key.
 * A bucket keeps each key's offset into its minute (a small integer, held without a heap number
 * per key, as an epoch-ms instant would be).
 */
export class TimeIndex {
  private readonly buckets = new Map<number, Map<string, number>>();
  /** Bucket numbers in ascending order (new instants are mostly recent: appends, rarely inserts). */
  private readonly order: number[] = [];

  add(key: string, at: number): void {
    const b = Math.floor(at / bucketMs);
    let bucket = this.buckets.get(b);
    if (!bucket) {
      this.buckets.set(b, (bucket = new Map()));
      this.order.splice(this.position(b), 0, b);
    }
    bucket.set(key, Math.floor(at) - b * bucketMs);
  }

  delete(key: string, at: number): void {
    const b = Math.floor(at / bucketMs);
    const bucket = this.buckets.get(b);
    if (!bucket?.delete(key) || bucket.size > 0) return;
    this.buckets.delete(b);
    this.order.splice(this.position(b), 1);
  }

  /** Keys whose instant is at or before `at`, earliest bucket first. */
  *upTo(at: number): Generator<string> {
    const last = Math.floor(at / bucketMs);
    for (const b of this.order) {
      if (b > last) return;
      const start = b * bucketMs;
      for (const [key, offset] of this.buckets.get(b)!) if (start + offset <= at) yield key;
    }
  }

  private position(b: number): number {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.order[mid]! < b) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
