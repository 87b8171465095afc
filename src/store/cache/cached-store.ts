/**
 * The watch cache (kube-apiserver's cacher): a Store layer that keeps every object of the store in
 * memory, filled by one list and kept current by one watch from that list's revision, and answers
 * get, list and getByIndex from memory with consistent reads. Writes pass through to the store.
 * Whenever the cache cannot vouch for its content (filling, its watch failed, too slow to catch
 * up) reads go to the store: an answer is never staler than the store's, nor an error of the cache's.
 */
import { isStorageError, notFound } from '../errors.js';
import type { LogStore } from '../log/log-store.js';
import {
  prefixEnd,
  silentLog,
  type Indexer,
  type ScanFilter,
  type ListOptions,
  type ListResult,
  type Preconditions,
  type Store,
  type StoreLog,
  type StoreWatch,
  type StoredObject,
  type TryUpdate,
  type WriteOptions,
  type FenceOption,
} from '../types.js';
import { CacheState, decodeEntry, type Entry } from './cache-state.js';
import { deepFreeze, fill } from './fill.js';
import type { CacheIndexers } from './field-index.js';
import { RevisionGate } from './revision-gate.js';
import type { CacheReads } from '../cache-reads.js';
import { NarrowedKeys } from './narrowed-keys.js';
import { rangeOf, type CachedRange } from './cache-range.js';
import { decodedInTurn, scanState } from './cache-scan.js';

/** What the cache needs of the store beyond Store: pages of stored rows with their keys (LogStore). */
export type CacheableStore = Store & Pick<LogStore, 'listRows'> & { notifyWatchers?(): void };

export interface CachedStoreOptions {
  /** How long a read waits for the cache to reach the store's revision before asking the store. */
  waitMs?: number;
  /**
   * A top-level property kept apart from each object's JSON (default: `sealed`, the API's sealed
   * secrets, so that the JSON the cache holds is the API's JSON of the object); undefined for none.
   */
  apart?: string | undefined;
  /** Pause before filling the cache again after its watch failed. */
  retryMs?: number;
  log?: StoreLog;
}

export class CachedStore implements Store, CacheReads {
  private state: CacheState;
  private indexer: Indexer = () => undefined;
  private indexers: CacheIndexers = {};
  private readonly gate: RevisionGate;
  private readonly waitMs: number;
  private readonly retryMs: number;
  /** The property each entry keeps apart from its JSON (see CachedStoreOptions.apart). */
  readonly apart: string | undefined;
  private readonly decoded = new WeakMap<Entry, StoredObject>();
  private readonly log: StoreLog;
  private running: Promise<void> | undefined;
  /** The watch the cache follows (or is filling with), so that setIndexer and close can end it. */
  private watch_: StoreWatch | undefined;
  /** Counts indexer changes: a fill begun under an older indexer is thrown away. */
  private generation = 0;
  /** Restricted readers' candidate keys (narrowed-keys.ts). */
  private readonly narrowed = new NarrowedKeys();

  constructor(
    /** The store it caches (the audit trail lives beside it). */
    readonly inner: CacheableStore,
    opts: CachedStoreOptions = {},
  ) {
    this.waitMs = opts.waitMs ?? 3000;
    this.retryMs = opts.retryMs ?? 1000;
    this.apart = 'apart' in opts ? opts.apart : 'sealed';
    this.log = opts.log ?? silentLog;
    this.gate = new RevisionGate(() => inner.currentRevision());
    this.state = new CacheState(this.indexer, this.apart);
  }

  /** Starts filling the cache; reads before it is filled go to the store. Idempotent. */
  start(): this {
    this.running ??= this.run();
    return this;
  }

  /** Its reads from memory, for the registry (cache-reads.ts): the cache is its own reader. */
  cache(): CacheReads {
    return this;
  }

  /** Resolves once the cache answers reads (tests, and a server that wants to start warm). */
  async ready(timeoutMs = 30_000): Promise<boolean> {
    this.start();
    // A monotonic clock: a wall-clock step (NTP, a VM resumed) neither lengthens nor ends the wait.
    const deadline = performance.now() + timeoutMs;
    while (this.gate.state === 'Pending' && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return this.gate.state === 'Ready';
  }

  setIndexer(indexer: Indexer): void {
    this.indexer = indexer;
    this.inner.setIndexer(indexer);
    // Index values of what is cached may differ under the new indexer: fill again.
    this.generation++;
    this.gate.markPending();
    this.watch_?.stop();
  }

  /**
   * Installs the field and time indexes the cache keeps (field-index.ts), before it is used: the
   * registry's lookups by holder, team, owner, expiry. The cache fills again under them.
   */
  setCacheIndexers(indexers: CacheIndexers): void {
    this.indexers = indexers;
    this.generation++;
    this.gate.markPending();
    this.watch_?.stop();
  }

  /**
   * The objects under prefix whose value in the field index `name` is `value` (fresh copies, in key
   * order), by a consistent read; undefined when the cache cannot vouch (the caller then filters a
   * list of the store, which answers the same).
   */
  async byField<T extends StoredObject>(prefix: string, name: string, value: string): Promise<T[] | undefined> {
    if ((await this.consistentAt()) === undefined) return undefined;
    return this.state.fieldLookup(name, prefix, prefixEnd(prefix), value).sort().map((k) => this.state.get<T>(k)!);
  }

  /** The objects under prefix whose instant in the time index `name` is at or before `at`; undefined as for byField. */
  async dueBy<T extends StoredObject>(prefix: string, name: string, at: number): Promise<Iterable<T> | undefined> {
    // A sweep, as scan: the cache as it is, when filled (no consistent read needed off the request path).
    if (this.gate.state !== 'Ready') return undefined;
    return decodedInTurn<T>(() => this.state, this.state.dueBy(name, prefix, prefixEnd(prefix), at).sort());
  }

  /** byField for a sweep: the cache as it is, when filled, each object decoded as it is reached. */
  async eachByField<T extends StoredObject>(prefix: string, name: string, value: string): Promise<Iterable<T> | undefined> {
    if (this.gate.state !== 'Ready') return undefined;
    return decodedInTurn<T>(() => this.state, this.state.fieldLookup(name, prefix, prefixEnd(prefix), value).sort());
  }

  scanStore<T extends StoredObject>(prefix: string, mightMatch: ScanFilter): AsyncGenerator<T> {
    return this.inner.scan<T>(prefix, mightMatch);
  }

  async getByIndex<T extends StoredObject>(prefix: string, value: string): Promise<T[]> {
    if (!(await this.fresh())) return this.inner.getByIndex<T>(prefix, value);
    return this.fromIndex<T>(prefix, value);
  }

  /**
   * getByIndex for authentication: the same consistent read (the store's revision, the cache at
   * it), answered with the cache's shared frozen objects (one per key version) rather than fresh
   * copies; undefined when the cache cannot vouch, and the caller asks the store. Never from memory
   * alone: another replica may just have disabled, deleted or rotated the key. `revision` is the
   * store's revision the read was made at (read after this call), for a caller that must bring
   * other state to the same moment (the team index).
   */
  async cachedByIndex<T extends StoredObject>(prefix: string, value: string): Promise<{ items: readonly Readonly<T>[]; revision: number } | undefined> {
    const revision = await this.consistentAt();
    if (revision === undefined) return undefined;
    return { items: this.state.indexed(prefix, prefixEnd(prefix), value).map((k) => this.shared<T>(this.state.entry(k)!)), revision };
  }

  private shared<T extends StoredObject>(entry: Entry): Readonly<T> {
    let obj = this.decoded.get(entry);
    if (!obj) this.decoded.set(entry, (obj = deepFreeze(decodeEntry(entry, this.apart))));
    return obj as Readonly<T>;
  }

  /** The cached entry of a key, when the cache is current with the store (fast GET serving). */
  async cachedEntry(key: string): Promise<Entry | null | undefined> {
    if (!(await this.fresh())) return undefined;
    return this.state.entry(key) ?? null;
  }

  async get<T extends StoredObject>(key: string): Promise<T> {
    if (!(await this.fresh())) return this.inner.get<T>(key);
    const obj = this.state.get<T>(key);
    if (!obj) throw notFound(key);
    return obj;
  }

  async list<T extends StoredObject>(prefix: string, opts: ListOptions = {}): Promise<ListResult<T>> {
    const page = await this.cachedList(prefix, opts);
    if (!page) return this.inner.list<T>(prefix, opts);
    const { entries, ...rest } = page;
    return { items: entries.map((e) => decodeEntry<T>(e, this.apart)), ...rest };
  }

  /**
   * A list page as cached entries, when the cache can answer it: the current state (no revision, or
   * exactly the revision the cache is at, as the later pages of a list read from it ask for).
   * Undefined sends the caller to the store (an older revision, or a cache that cannot vouch).
   */
  async cachedList(
    prefix: string,
    opts: ListOptions = {},
  ): Promise<{ entries: (Entry & { key: string })[]; revision: number; continueAfter?: string } | undefined> {
    const range = await this.cachedRange(prefix, opts);
    if (!range?.current()) return undefined;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const entries: (Entry & { key: string })[] = [];
    for (const [key, entry] of range.entries) {
      if (limit > 0 && entries.length === limit) return { entries, revision: range.revision, continueAfter: entries[limit - 1]!.key };
      entries.push({ key, ...entry });
    }
    return { entries, revision: range.revision };
  }

  /**
   * The cached entries under prefix after `opts.after`, in key order, read lazily: the caller takes
   * them before its next await, while the cache is still at `revision`. Undefined as for cachedList.
   */
  async cachedRange(prefix: string, opts: Pick<ListOptions, 'after' | 'revision' | 'within'> = {}): Promise<CachedRange | undefined> {
    if (!(await this.fresh())) return undefined;
    const revision = this.gate.applied;
    if (opts.revision !== undefined && opts.revision !== revision) return undefined;
    const state = this.state;
    return { ...rangeOf(state, this.narrowed, prefix, prefixEnd(prefix), revision, opts), current: () => this.state === state && this.gate.applied === revision };
  }

  async *scan<T extends StoredObject>(prefix: string, mightMatch: ScanFilter, pageSize?: number): AsyncGenerator<T> {
    // A sweep needs no single snapshot (see LogStore.scan): the cache as it is, when filled.
    if (this.gate.state !== 'Ready') {
      yield* this.inner.scan<T>(prefix, mightMatch, pageSize);
      return;
    }
    yield* scanState<T>(this.state, prefix, mightMatch);
  }

  async create<T extends StoredObject>(key: string, obj: T, opts?: WriteOptions<T>): Promise<T> {
    const created = await this.inner.create(key, obj, opts);
    await this.applied(Number(created.metadata?.resourceVersion));
    return created;
  }

  async guaranteedUpdate<T extends StoredObject>(key: string, preconditions: Preconditions | undefined, tryUpdate: TryUpdate<T>, opts?: WriteOptions<T>): Promise<T> {
    const result = await this.inner.guaranteedUpdate(key, preconditions, tryUpdate, opts);
    // A Removal answers with the object as read, not the deletion's revision: wait for the store's.
    await this.applied(await this.gate.currentRevision().catch(() => 0));
    return result;
  }

  async delete<T extends StoredObject>(key: string, preconditions?: Preconditions, opts?: WriteOptions<T>): Promise<T> {
    const deleted = await this.inner.delete<T>(key, preconditions, opts);
    await this.applied(Number(deleted.metadata?.resourceVersion));
    return deleted;
  }

  watch<T extends StoredObject>(prefix: string, fromRevision: number): StoreWatch<T> {
    return this.inner.watch<T>(prefix, fromRevision);
  }

  /** From a read started after the call, shared by the callers of one event-loop turn (see RevisionGate). */
  currentRevision(): Promise<number> {
    return this.gate.currentRevision();
  }

  compactedRevision(): Promise<number> {
    return this.inner.compactedRevision();
  }

  scrubHistory(key: string, property: string, opts?: FenceOption): Promise<void> {
    return this.inner.scrubHistory(key, property, opts);
  }

  compact(revision: number, opts?: FenceOption): Promise<void> {
    return this.inner.compact(revision, opts);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  async close(): Promise<void> {
    this.gate.stop();
    this.watch_?.stop();
    await this.inner.close();
    await this.running;
  }

  /** Whether the cache may answer a read now: it has applied the store's current revision. */
  private async fresh(): Promise<boolean> {
    return (await this.consistentAt()) !== undefined;
  }

  /** The store's revision, read after this call, once the cache has applied it; undefined when the cache cannot vouch. */
  private async consistentAt(): Promise<number | undefined> {
    this.start();
    if (this.gate.state !== 'Ready') return undefined;
    const revision = await this.gate.currentRevision();
    if (this.gate.applied < revision) {
      this.inner.notifyWatchers?.(); // another process wrote: read the log now, not at the next poll
      if (!(await this.gate.reach(revision, this.waitMs))) return undefined;
    }
    return this.gate.state === 'Ready' ? revision : undefined;
  }

  /** A write was acknowledged by the store: acknowledge it once the cache has it too (bounded). */
  private async applied(revision: number): Promise<void> {
    if (Number.isSafeInteger(revision) && revision > 0) await this.gate.reach(revision, this.waitMs);
  }

  private fromIndex<T extends StoredObject>(prefix: string, value: string): T[] {
    return this.state.indexed(prefix, prefixEnd(prefix), value).map((k) => this.state.get<T>(k)!);
  }

  /**
   * Fill, follow, and on any failure fill again after a pause, until closed: Pending -> Ready when
   * a fill completes under the current indexer, Ready -> Pending when its watch ends.
   */
  private async run(): Promise<void> {
    while (!this.stopped()) {
      const generation = this.generation;
      try {
        const filled = await fill(this.inner, this.indexer, this.apart, (w) => (this.watch_ = w), this.indexers);
        if (generation === this.generation && !this.stopped()) {
          this.state = filled.state;
          this.gate.markReady(filled.revision);
          await this.follow(filled.watch);
        } else filled.watch.stop(); // the indexer changed while filling: fill again with it
      } catch (err) {
        if (this.stopped()) return;
        const level = isStorageError(err, 'Expired') || isStorageError(err, 'WatchOverflow') ? 'info' : 'warn';
        this.log[level]({ err }, 'watch cache: following the store failed; reads go to the store until it is filled again');
      }
      this.gate.markPending();
      if (this.stopped()) return;
      if (generation === this.generation) await new Promise((r) => setTimeout(r, this.retryMs).unref());
    }
  }

  /** A method, not `this.gate.state === 'Stopped'` inline: TypeScript would keep a narrowing across awaits. */
  private stopped(): boolean {
    return this.gate.state === 'Stopped';
  }

  private async follow(watch: StoreWatch): Promise<void> {
    for await (const event of watch) {
      this.state.apply(event);
      this.gate.advance(event.revision);
    }
  }
}

