/**
 * What the watch cache holds: per key, the object as JSON with its resourceVersion set and one
 * top-level property kept apart (the sealed secrets: then the JSON is exactly the API's JSON of the
 * object, served as it is), the keys in list order, and the secondary index. Secrets stay sealed,
 * as in the store. Objects are kept encoded, not decoded: 100,000 keys fit in a fraction of the
 * memory, and every read decodes its own copy, which the caller may mutate (the update paths do).
 */
import { decodeObject } from '../encode.js';
import { indexValues, type Indexer, type StoreEvent, type StoredObject } from '../types.js';
import { SortedKeys } from './sorted-keys.js';
import { FieldIndex, TimeIndex, fieldValues, type CacheIndexers } from './field-index.js';

export interface Entry {
  revision: number;
  /**
   * UTF-8 of JSON.stringify of the object without the property kept apart, metadata.resourceVersion
   * set, followed by the JSON of the property kept apart when the object has it. Bytes, not
   * strings: small Buffers share Node's pool slabs outside the V8 heap (100,000 keys as strings
   * grew the heap, and its slack, by far more than their size), and a response sends them as they
   * are. One range for both: a second string per access key cost 13 MB of heap, plus its slack.
   * Held as the memory's ArrayBuffer and a range, not a Buffer: a Buffer object per entry cost
   * about 100 bytes of heap each, and the entries loaded together share one ArrayBuffer (a slab).
   */
  memory: ArrayBuffer;
  offset: number;
  /**
   * Bytes of the object's JSON. A newline follows it (a response body ends in one, as Go's
   * json.Encoder writes it: a GET sends the JSON and its newline as they are, with no copy to
   * append it), then the kept-apart JSON, if any, up to `length`.
   */
  apartAt: number;
  length: number;
  /** The index values: one string in the common case, an array only when the object carries two. */
  index: string | readonly string[] | undefined;
}

/**
 * An index function's answer, or none when it throws: an object of a shape the schema would refuse
 * (written past the API) must not stop the cache following the store; it is just not indexed.
 */
function safely<T>(answer: () => T): T | undefined {
  try {
    return answer();
  } catch {
    return undefined;
  }
}

/** An entry's index values as a list. */
const valuesOf = (index: Entry['index']): readonly string[] => (index === undefined ? [] : typeof index === 'string' ? [index] : index);

/** Both JSONs, one after the other, a newline between them (shares the entry's memory). */
export const bytesOf = (e: Entry): Buffer => Buffer.from(e.memory, e.offset, e.length);

/** The object's JSON without the property kept apart (shares the entry's memory). */
export const jsonOf = (e: Entry): Buffer => Buffer.from(e.memory, e.offset, e.apartAt);

/** The same JSON followed by a newline: a response body as it is sent (shares the entry's memory). */
export const jsonLineOf = (e: Entry): Buffer => Buffer.from(e.memory, e.offset, e.apartAt + 1);

/** The kept-apart property's JSON, when the object has it. */
export const apartOf = (e: Entry): string | undefined => (e.apartAt + 1 === e.length ? undefined : Buffer.from(e.memory, e.offset + e.apartAt + 1, e.length - e.apartAt - 1).toString());

/**
 * The fill's objects share Node's 8 KB pool slabs (about a dozen per slab, little overhead). A
 * changed object gets bytes of its own: in a shared slab it would pin the slab, and the old
 * versions of its neighbours with it, for as long as it lives, so that under steady updates the
 * slabs kept would grow to several times the JSON they still hold.
 */
const pooled = (size: number): Buffer => Buffer.allocUnsafe(size);
const unpooled = (size: number): Buffer => Buffer.allocUnsafeSlow(size);

export class CacheState {
  private readonly entries = new Map<string, Entry>();
  private readonly keys = new SortedKeys();
  /** Index value -> key; a Set only in the rare moment two keys share a value (values are unique among live objects). */
  private readonly byIndex = new Map<string, string | Set<string>>();
  /** The lookups kept for the request path and the sweeps (field-index.ts), by name. */
  private readonly fields = new Map<string, FieldIndex>();
  private readonly times = new Map<string, TimeIndex>();

  constructor(
    private readonly indexer: Indexer,
    private readonly apart: string | undefined,
    private readonly indexers: CacheIndexers = {},
  ) {
    for (const name of Object.keys(indexers.fields ?? {})) this.fields.set(name, new FieldIndex());
    for (const name of Object.keys(indexers.times ?? {})) this.times.set(name, new TimeIndex());
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether the field index `name` is kept. */
  hasField(name: string): boolean {
    return this.fields.has(name);
  }

  /** How many keys (of every prefix) carry `value` in the field index `name`. */
  fieldSize(name: string, value: string): number {
    return this.fields.get(name)?.size(value) ?? 0;
  }

  /** Keys in [start, end) whose value in the field index `name` is `value`, unordered. */
  fieldLookup(name: string, start: string, end: string, value: string): string[] {
    const index = this.fields.get(name);
    if (!index) throw new Error(`the watch cache keeps no field index ${name}`);
    return index.lookup(value).filter((k) => k >= start && k < end);
  }

  /** Keys in [start, end) whose instant in the time index `name` is at or before `at`. */
  dueBy(name: string, start: string, end: string, at: number): string[] {
    const index = this.times.get(name);
    if (!index) throw new Error(`the watch cache keeps no time index ${name}`);
    const keys: string[] = [];
    for (const k of index.upTo(at)) if (k >= start && k < end) keys.push(k);
    return keys;
  }

  /** Adds a stored row read by a list in key order (the cache is being filled). */
  load(key: string, value: string, revision: number): void {
    this.keys.push(key);
    this.put(key, decodeObject(value, revision), revision, pooled);
  }

  /** Applies one watch event. */
  apply(event: StoreEvent): void {
    if (event.type === 'DELETED') {
      this.remove(event.key);
      return;
    }
    if (!this.entries.has(event.key)) this.keys.add(event.key);
    this.put(event.key, event.object, event.revision, unpooled, event.prevObject);
  }

  /** Whether any field or time index is kept (an update must then read the old version's values). */
  private get indexing(): boolean {
    return this.fields.size > 0 || this.times.size > 0;
  }

  /** Adds (`add`) or removes the key under each field and time index value of `obj`. */
  private indexFields(key: string, obj: StoredObject, add: boolean): void {
    for (const [name, index] of this.fields) {
      for (const v of fieldValues(safely(() => this.indexers.fields![name]!(key, obj)))) add ? index.add(key, v) : index.delete(key, v);
    }
    for (const [name, index] of this.times) {
      const at = safely(() => this.indexers.times![name]!(key, obj));
      if (at !== undefined && Number.isFinite(at)) add ? index.add(key, at) : index.delete(key, at);
    }
  }

  entry(key: string): Entry | undefined {
    return this.entries.get(key);
  }

  /** A fresh decoded copy of the key's object. */
  get<T extends StoredObject>(key: string): T | undefined {
    const e = this.entries.get(key);
    return e && decodeEntry<T>(e, this.apart);
  }

  /** Keys in [start, end) after `after`, in order. */
  range(start: string, end: string, after: string): Generator<string> {
    return this.keys.range(start, end, after);
  }

  /** How many keys range(start, end, after) yields (no walk). */
  count(start: string, end: string, after: string): number {
    return this.keys.count(start, end, after);
  }

  /** Keys in [start, end) whose index value is `value`, in key order. */
  indexed(start: string, end: string, value: string): string[] {
    const held = this.byIndex.get(value);
    if (held === undefined) return [];
    const keys = typeof held === 'string' ? [held] : [...held].sort();
    return keys.filter((k) => k >= start && k < end);
  }

  /** `obj` carries its resourceVersion (decoded rows and watch events both do). */
  private put(key: string, obj: StoredObject, revision: number, alloc: (size: number) => Buffer, prev?: StoredObject): void {
    const old = this.entries.get(key);
    // The old version's values are read back from its JSON rather than kept per entry: a decode
    // per change costs less than holding every value of every object twice. An event that carries
    // that same version decoded saves the decode (a write to a 2.9 MB object parsed it again).
    if (old && this.indexing) this.indexFields(key, prev?.metadata?.resourceVersion === String(old.revision) ? prev : decodeEntry(old, this.apart), false);
    if (this.indexing) this.indexFields(key, obj, true);
    const values = indexValues(this.indexer(key, obj));
    const index = values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
    for (const v of valuesOf(old?.index)) if (!values.includes(v)) this.unindex(key, v);
    const record = obj as Record<string, unknown>;
    let json: string;
    let apart = '';
    if (this.apart !== undefined && record[this.apart] !== undefined) {
      const { [this.apart]: kept, ...rest } = record;
      json = JSON.stringify(rest);
      apart = JSON.stringify(kept);
    } else json = JSON.stringify(obj);
    const apartAt = Buffer.byteLength(json);
    const bytes = alloc(apartAt + 1 + Buffer.byteLength(apart));
    bytes.write(json);
    bytes[apartAt] = 0x0a;
    if (apart) bytes.write(apart, apartAt + 1);
    // Every property at once: one shape for all entries, no out-of-object property store each.
    const entry: Entry = { revision, memory: bytes.buffer as ArrayBuffer, offset: bytes.byteOffset, apartAt, length: bytes.length, index };
    for (const v of values) {
      const held = this.byIndex.get(v);
      if (held === undefined || held === key) this.byIndex.set(v, key);
      else if (typeof held === 'string') this.byIndex.set(v, new Set([held, key]));
      else held.add(key);
    }
    this.entries.set(key, entry);
  }

  private remove(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    if (this.indexing) this.indexFields(key, decodeEntry(old, this.apart), false);
    this.entries.delete(key);
    this.keys.delete(key);
    for (const v of valuesOf(old.index)) this.unindex(key, v);
  }

  private unindex(key: string, value: string): void {
    const held = this.byIndex.get(value);
    if (held === key) this.byIndex.delete(value);
    else if (held instanceof Set) {
      held.delete(key);
      if (held.size === 1) this.byIndex.set(value, held.values().next().value!);
    }
  }
}

/** Decodes an entry into a new object, the property kept apart put back. */
export function decodeEntry<T extends StoredObject>(e: Entry, apart: string | undefined): T {
  const obj = JSON.parse(jsonOf(e).toString()) as Record<string, unknown>;
  const kept = apartOf(e);
  if (apart !== undefined && kept !== undefined) obj[apart] = JSON.parse(kept);
  return obj as T;
}
