/**
 * Keys in the order the backends list them (bytewise: SQLite's BINARY, PostgreSQL's COLLATE "C"),
 * so a page served from the cache and the next one served by the store continue at the same key.
 * Object names are DNS labels (ASCII), where JavaScript's string order is that byte order.
 */
export class SortedKeys {
  private keys: string[] = [];

  get size(): number {
    return this.keys.length;
  }

  /** The position of the first key not below `key`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  add(key: string): void {
    const at = this.lowerBound(key);
    if (this.keys[at] !== key) this.keys.splice(at, 0, key);
  }

  delete(key: string): void {
    const at = this.lowerBound(key);
    if (this.keys[at] === key) this.keys.splice(at, 1);
  }

  /** Appends a key known to sort after every key held (a list read in key order). */
  push(key: string): void {
    this.keys.push(key);
  }

  /** How many keys range(start, end, after) yields, by two binary searches rather than a walk. */
  count(start: string, end: string, after: string): number {
    let from = after >= start ? this.lowerBound(after) : this.lowerBound(start);
    if (this.keys[from] === after) from++;
    return Math.max(0, this.lowerBound(end) - from);
  }

  /** Keys in [start, end) strictly after `after`, in order. */
  *range(start: string, end: string, after: string): Generator<string> {
    let i = after >= start ? this.lowerBound(after) : this.lowerBound(start);
    if (this.keys[i] === after) i++;
    for (; i < this.keys.length; i++) {
      const key = this.keys[i]!;
      if (key >= end) return;
      yield key;
    }
  }
}
