/**
 * Keys in the order the backends list them (bytewise: SQLite's BINARY, PostgreSQL's COLLATE "C"),
 * so a page served from the cache and the next one served by the store continue at the same key.
 * Object names are DNS labels (ASCII), where JavaScript's string order is that byte order.
 *
 * Held as a list of sorted chunks (each at most `chunkSize` keys, none empty), not one array: an
 * insert or delete in one array copies every key after it, which at a million keys made each
 * create cost milliseconds and a fill quadratic. In chunks it copies at most one chunk plus the
 * chunk pointers, O(sqrt n) with the default size. A key that sorts after every key held (a fill,
 * names handed out in order) is appended without a search. Positions (a LIST's
 * remainingItemCount) come from a prefix sum of chunk sizes, rebuilt only when a read needs it
 * after a change.
 */
/** The position of the first key in a sorted chunk not below `key` (above it: `key + '\0'`, its successor). */
export function lowerBound(chunk: readonly string[], key: string): number {
  let lo = 0;
  let hi = chunk.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (chunk[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class SortedKeys {
  private chunks: string[][] = [];
  private total = 0;
  /** starts[i]: keys before chunk i; stale (undefined) after a change until a count needs it. */
  private starts: number[] | undefined;
  /** Bumped by every change, so a range read across one re-seeks rather than skipping keys. */
  private version = 0;

  constructor(private readonly chunkSize = 1024) {}

  get size(): number {
    return this.total;
  }

  /** The chunk a key belongs in: the last whose first key is not above it (0 when none is). */
  private chunkOf(key: string): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.chunks[mid]![0]! <= key) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(0, lo - 1);
  }

  /** [chunk, position] of the first key not below `key`; [chunks.length, 0] past the end. */
  private seek(key: string): [number, number] {
    const c = this.chunkOf(key);
    const chunk = this.chunks[c];
    if (!chunk) return [0, 0];
    const lo = lowerBound(chunk, key);
    return lo === chunk.length ? [c + 1, 0] : [c, lo];
  }

  private changed(by: number): void {
    this.total += by;
    this.starts = undefined;
    this.version++;
  }

  add(key: string): void {
    const last = this.chunks.at(-1);
    if (last === undefined || last.at(-1)! < key) {
      this.push(key);
      return;
    }
    const c = this.chunkOf(key);
    const chunk = this.chunks[c]!;
    const lo = lowerBound(chunk, key);
    if (chunk[lo] === key) return;
    chunk.splice(lo, 0, key);
    // A full chunk splits in halves, so inserts at random keep chunks between half and full.
    if (chunk.length > this.chunkSize) this.chunks.splice(c + 1, 0, chunk.splice(chunk.length >>> 1));
    this.changed(1);
  }

  delete(key: string): void {
    const [c, at] = this.seek(key);
    const chunk = this.chunks[c];
    if (chunk?.[at] !== key) return;
    chunk.splice(at, 1);
    if (chunk.length === 0) this.chunks.splice(c, 1);
    else if (chunk.length < this.chunkSize >>> 2) {
      // A chunk emptied by deletes joins a neighbour when both fit in one, so many deletes leave
      // no trail of tiny chunks to search through.
      const next = this.chunks[c + 1];
      if (next && chunk.length + next.length <= this.chunkSize) this.chunks.splice(c, 2, chunk.concat(next));
    }
    this.changed(-1);
  }

  /** Appends a key known to sort after every key held (a list read in key order). */
  push(key: string): void {
    const last = this.chunks.at(-1);
    if (last === undefined || last.length >= this.chunkSize) this.chunks.push([key]);
    else last.push(key);
    this.changed(1);
  }

  /** The position of the first key not below `key` among all keys held. */
  private rank(key: string): number {
    const [c, at] = this.seek(key);
    if (c === this.chunks.length) return this.total;
    if (!this.starts) {
      const starts = new Array<number>(this.chunks.length);
      let sum = 0;
      for (let i = 0; i < this.chunks.length; i++) {
        starts[i] = sum;
        sum += this.chunks[i]!.length;
      }
      this.starts = starts;
    }
    return this.starts[c]! + at;
  }

  /** The key at [chunk, position], or undefined past the end. */
  private at(c: number, i: number): string | undefined {
    return this.chunks[c]?.[i];
  }

  /** How many keys range(start, end, after) yields, by binary searches rather than a walk. */
  count(start: string, end: string, after: string): number {
    const fromKey = after >= start ? after : start;
    let from = this.rank(fromKey);
    const [c, i] = this.seek(fromKey);
    if (this.at(c, i) === after) from++;
    return Math.max(0, this.rank(end) - from);
  }

  /**
   * Keys in [start, end) strictly after `after`, in order. Read lazily: should the keys change
   * between two steps, the next step resumes after the last key it gave, in the keys as they are.
   */
  *range(start: string, end: string, after: string): Generator<string> {
    let [c, i] = this.seek(after >= start ? after : start);
    if (this.at(c, i) === after) i++;
    for (;;) {
      const chunk = this.chunks[c];
      if (!chunk) return;
      if (i >= chunk.length) {
        c++;
        i = 0;
        continue;
      }
      const key = chunk[i]!;
      if (key >= end) return;
      const version = this.version;
      yield key;
      if (this.version !== version) {
        [c, i] = this.seek(key);
        if (this.at(c, i) === key) i++;
      } else i++;
    }
  }
}
