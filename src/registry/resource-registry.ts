/** The API semantics of one kind over a Store: one method per verb, each in its own module. */
import { FieldCipher } from '../api/field-cipher.js';
import type { ResourceModel } from '../api/model.js';
import { generateName } from '../api/names.js';
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject, ObjectList } from '../api/types.js';
import type { ListOptions as StoreListOptions, ListResult, Store, StoreWatch } from '../store/types.js';
import { keyOf, makeContext, present, type RegistryContext, type WriteResult } from './context.js';
import { create, type CreateOptions } from './create.js';
import { remove, removeDue, type DeleteOptions, type DeleteResult } from './delete.js';
import { assertReached, list, parseResourceVersion, type ListOptions } from './list.js';
import { getJson, listJson, type CachedObject } from './cached-reads.js';
import { PageBodies } from './page-bodies.js';
import { storeCall } from './storage-errors.js';
import type { WriteObserver } from './write-observer.js';
import { patch, update, type PatchType, type UpdateOptions } from './update.js';
import { watch, type RegistryWatch, type WatchOptions } from './watch.js';
import { apply, type ApplyOptions } from './server-side-apply.js';
import { rotate, type RotateOptions } from './rotate.js';
import { recordKeyUse, writeServerStatus, type KeyUse, type ServerStatusOptions } from './server-status.js';
import { InFlight } from './in-flight.js';
import { byField, dueBy, eachByField, eachDue, type FieldIndexName, type TimeIndexName } from './indexes.js';

export interface RegistryOptions {
  /** The clock; tests pass their own to step through grace periods and TTLs. */
  now?: () => Date;
  /** Names from a generateName prefix; tests pass their own to force collisions. */
  generateName?: (prefix: string) => string;
  /** Encrypts sealed fields; without one, a key that lives only in this process (fine for memory:). */
  cipher?: FieldCipher;
  /** Told about every successful write: the server's audit trail. */
  onWrite?: WriteObserver;
  /** Counts the writes under way (shared by the kinds of one registry), so a stop can wait for them. */
  inFlight?: InFlight;
}

export class ResourceRegistry {
  readonly ctx: RegistryContext;
  private readonly writes: InFlight;
  /** The last LIST bodies spliced from the cache, for readers who see every object (page-bodies.ts). */
  private readonly pages = new PageBodies();

  constructor(store: Store, model: ResourceModel, opts: RegistryOptions = {}) {
    this.writes = opts.inFlight ?? new InFlight();
    this.ctx = makeContext(store, model, opts.now ?? (() => new Date()), opts.generateName ?? generateName, opts.cipher ?? FieldCipher.ephemeral(), opts.onWrite);
  }

  get info() {
    return this.ctx.model.info;
  }

  create(body: unknown, opts?: CreateOptions): Promise<WriteResult> {
    return this.writes.track(create(this.ctx, body, opts).then((r) => this.warned(r)));
  }

  /** Adds the kind's warnings about the object written (kube's WarningsOnCreate / WarningsOnUpdate); a status write has none. */
  private warned<R extends WriteResult>(result: R, subresource?: string): R {
    const more = subresource ? [] : (this.ctx.model.strategy.warnings?.(result.object) ?? []);
    return more.length > 0 ? { ...result, warnings: [...result.warnings, ...more] } : result;
  }

  async get(name: string): Promise<KubeObject> {
    const stored = await storeCall(this.ctx, name, () => this.ctx.store.get<StoredApiObject>(keyOf(this.ctx, name)));
    return present(stored);
  }

  /** 504 Too large resource version when resourceVersion (a GET's "not older than") is ahead of the store. */
  assertReached(resourceVersion: string | undefined): Promise<void> {
    return assertReached(this.ctx, parseResourceVersion(resourceVersion));
  }

  /**
   * A sealed field's plain value (`spec.identity.connectorData`), for the server's own use (the
   * identity refresher's refresh token): never part of an API response.
   */
  async sealedValue(name: string, dottedPath: string): Promise<string | undefined> {
    const stored = await storeCall(this.ctx, name, () => this.ctx.store.get<StoredApiObject>(keyOf(this.ctx, name)));
    const sealed = stored.sealed?.fields?.[dottedPath];
    return sealed === undefined ? undefined : this.ctx.cipher.open(sealed, `${stored.metadata.uid ?? ''}/${dottedPath}`);
  }

  list(opts?: ListOptions): Promise<ObjectList<KubeObject>> {
    return list(this.ctx, opts);
  }

  /** GET as JSON text from the watch cache; undefined when only get() can answer. */
  getJson(name: string): Promise<CachedObject | undefined> {
    return getJson(this.ctx, name);
  }

  /** LIST's JSON body spliced from the watch cache; undefined when only list() can answer. `seesAll`: the filter passes everything. */
  listJson(opts: ListOptions, seesAll: boolean): Promise<Buffer | undefined> {
    return listJson(this.ctx, opts, seesAll, this.pages);
  }

  update(name: string, body: unknown, opts?: UpdateOptions): Promise<WriteResult> {
    return this.writes.track(update(this.ctx, name, body, opts).then((r) => this.warned(r, opts?.subresource)));
  }

  patch(name: string, type: PatchType, body: unknown, opts?: UpdateOptions): Promise<WriteResult> {
    return this.writes.track(patch(this.ctx, name, type, body, opts).then((r) => this.warned(r, opts?.subresource)));
  }

  /**
   * The rotation subresource of an access key (rotate.ts): a new value with an overlap (`created`:
   * 201, the new value in the response once) or the confirmation of one (200).
   */
  rotate(name: string, body: unknown, opts?: RotateOptions): Promise<WriteResult & { created: boolean }> {
    return this.writes.track(rotate(this.ctx, name, body, opts));
  }

  /** A status the server computes from the stored object (server-status.ts): an AccessRequest's approval or expiry. */
  writeStatus(name: string, next: (current: KubeObject) => unknown, opts?: ServerStatusOptions): Promise<KubeObject> {
    return this.writes.track(writeServerStatus(this.ctx, name, next, opts));
  }

  /** The server's record of a key's use in its status (server-status.ts); never a client's write. */
  recordUse(name: string, use: KeyUse): Promise<KubeObject> {
    return this.writes.track(recordKeyUse(this.ctx, name, use));
  }

  /** Server-side apply; `created` tells a 201 from a 200. */
  apply(name: string, body: unknown, opts: ApplyOptions): Promise<WriteResult & { created: boolean }> {
    return this.writes.track(apply(this.ctx, name, body, opts).then((r) => this.warned(r)));
  }

  delete(name: string, opts: DeleteOptions = {}): Promise<DeleteResult> {
    return this.writes.track(remove(this.ctx, name, opts));
  }

  /** Deletes every object the selectors match; returns what was deleted or is now terminating. */
  async deleteCollection(listOpts: ListOptions = {}, opts: DeleteOptions = {}): Promise<ObjectList<KubeObject>> {
    const { limit: _limit, continue: _continue, ...selection } = listOpts;
    const current = await this.list(selection);
    const items: KubeObject[] = [];
    for (const item of current.items) {
      try {
        items.push((await this.delete(item.metadata.name!, { ...opts, preconditions: { uid: item.metadata.uid! } })).object);
      } catch (err) {
        // Gone or replaced since the list, or not the caller's to delete: left alone.
        const reason = (err as { reason?: string }).reason;
        if (reason !== 'NotFound' && reason !== 'Conflict' && reason !== 'Forbidden') throw err;
      }
    }
    return { ...current, items };
  }

  watch(opts?: WatchOptions): RegistryWatch {
    return watch(this.ctx, opts);
  }

  /**
   * Every object whose stored encoding mightMatch accepts (a cheap substring test on the raw JSON;
   * false positives are fine, the caller checks the decoded object): background sweeps over large
   * stores parse only the few objects they may act on.
   */
  async *scan(mightMatch: (encoded: string) => boolean = () => true): AsyncGenerator<KubeObject> {
    for await (const stored of this.ctx.store.scan<StoredApiObject>(this.ctx.prefix, mightMatch)) yield present(stored);
  }

  /** The objects whose value in the field index `index` (indexes.ts) is `value`: an indexed read, no walk of the kind. */
  byField(index: FieldIndexName, value: string): Promise<KubeObject[]> {
    return byField(this.ctx, index, value);
  }

  /** byField, one object at a time, from the cache as it is: for a sweep (a consistent read is byField). */
  eachByField(index: FieldIndexName, value: string): AsyncGenerator<KubeObject> {
    return eachByField(this.ctx, index, value);
  }

  /** The objects whose instant in the time index `index` (indexes.ts) is at or before `at` (epoch ms). */
  dueBy(index: TimeIndexName, at: number): Promise<KubeObject[]> {
    return dueBy(this.ctx, index, at);
  }

  /** dueBy, one object at a time: for a sweep that may reach most of the keys. */
  eachDue(index: TimeIndexName, at: number): AsyncGenerator<KubeObject> {
    return eachDue(this.ctx, index, at);
  }

  /**
   * The objects whose secondary index value is `value`, in stored form: how a bearer key is found
   * by its SHA-256 hash (the store's one index). Authentication compares that sealed hash in
   * constant time, so this is the one read above the registry that sees a stored object. Always a
   * consistent read (a key disabled, deleted or rotated through another replica stops working at
   * once); over the watch cache the objects are its shared frozen ones: read them, never change them,
   * and `revision` is a store revision the read is at least as new as (with or without the cache).
   */
  findByIndex(value: string): Promise<{ items: readonly Readonly<StoredApiObject>[]; revision: number }> {
    const store = this.ctx.store;
    return storeCall(this.ctx, '', async () => {
      const cached = await store.cache?.().cachedByIndex<StoredApiObject>(this.ctx.prefix, value);
      if (cached) return cached;
      // Read before the objects, so they are at least as new as the revision said.
      const revision = await store.currentRevision();
      return { items: await store.getByIndex<StoredApiObject>(this.ctx.prefix, value), revision };
    });
  }

  /**
   * What an in-process informer (the team index) reads: one consistent page of this kind, and its
   * changes from a revision. Not the API's list and watch: an informer needs the store's progress
   * bookmark to know it has seen every write, and retries storage errors itself (they stay the
   * store's). The key prefix stays the registry's; no caller spells it.
   */
  informerPage(opts: StoreListOptions): Promise<ListResult<StoredApiObject>> {
    return this.ctx.store.list<StoredApiObject>(this.ctx.prefix, opts);
  }

  /** The store's current revision, for an informer waiting to have seen every write (see informerPage). */
  currentRevision(): Promise<number> {
    return this.ctx.store.currentRevision();
  }

  /** This kind's changes from `fromRevision`, for an informer (see informerPage). */
  informerWatch(fromRevision: number): StoreWatch<StoredApiObject> {
    return this.ctx.store.watch<StoredApiObject>(this.ctx.prefix, fromRevision);
  }

  /** Removes terminating objects that are due; run periodically by whoever hosts the registry. */
  async removeDue(): Promise<string[]> {
    return removeDue(this.ctx, await this.byField('lifecycle', 'terminating'));
  }
}
