/**
 * What the watch cache holds: per key, the object in its stored encoding (sealed secrets stay
 * sealed, as in the store) and revision, the keys in list order, and the secondary index.
 * Objects are kept encoded, not decoded: 100,000 keys fit in a fraction of the memory, and every
 * read decodes its own copy, which the caller may mutate (the update paths do).
 */
import { decodeObject, encodeObject } from '../encode.js';
import type { Indexer, StoreEvent, StoredObject } from '../types.js';
import { SortedKeys } from './sorted-keys.js';

export interface Entry {
  revision: number;
  /** The stored encoding, without resourceVersion (encode.ts). */
  value: string;
  index?: string;
  /** The API's JSON of the object (sealed dropped, resourceVersion set), once a reader asked for it. */
  presented?: string;
}

export class CacheState {
  private readonly entries = new Map<string, Entry>();
  private readonly keys = new SortedKeys();
  private readonly byIndex = new Map<string, Set<string>>();

  constructor(private readonly indexer: Indexer) {}

  get size(): number {
    return this.entries.size;
  }

  /** Adds a stored row read by a list in key order (the cache is being filled). */
  load(key: string, value: string, revision: number): void {
    this.keys.push(key);
    this.put(key, decodeObject(value, revision), revision, value);
  }

  /** Applies one watch event. */
  apply(event: StoreEvent): void {
    if (event.type === 'DELETED') {
      this.remove(event.key);
      return;
    }
    if (!this.entries.has(event.key)) this.keys.add(event.key);
    this.put(event.key, event.object, event.revision);
  }

  entry(key: string): Entry | undefined {
    return this.entries.get(key);
  }

  /** A fresh decoded copy of the key's object. */
  get<T extends StoredObject>(key: string): T | undefined {
    const e = this.entries.get(key);
    return e && decodeObject<T>(e.value, e.revision);
  }

  /** Keys in [start, end) after `after`, in order. */
  range(start: string, end: string, after: string): Generator<string> {
    return this.keys.range(start, end, after);
  }

  /** Keys in [start, end) whose index value is `value`, in key order. */
  indexed(start: string, end: string, value: string): string[] {
    const keys = this.byIndex.get(value);
    if (!keys) return [];
    return [...keys].filter((k) => k >= start && k < end).sort();
  }

  private put(key: string, obj: StoredObject, revision: number, value = encodeObject(obj)): void {
    const old = this.entries.get(key);
    const index = this.indexer(key, obj);
    if (old?.index !== undefined && old.index !== index) this.unindex(key, old.index);
    const entry: Entry = { revision, value };
    if (index !== undefined) {
      entry.index = index;
      let set = this.byIndex.get(index);
      if (!set) this.byIndex.set(index, (set = new Set()));
      set.add(key);
    }
    this.entries.set(key, entry);
  }

  private remove(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.keys.delete(key);
    if (old.index !== undefined) this.unindex(key, old.index);
  }

  private unindex(key: string, value: string): void {
    const set = this.byIndex.get(value);
    set?.delete(key);
    if (set?.size === 0) this.byIndex.delete(value);
  }
}
