/** WATCH: initial state, then every change in revision order, filtered by selectors, with bookmarks. */
import { ApiError, type Status } from '../api/errors.js';
import type { Matcher } from '../api/selectors.js';
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject, WatchEvent } from '../api/types.js';
import { StorageError } from '../store/errors.js';
import type { StoreEvent, StoreWatch } from '../store/types.js';
import { pendingWeight, WatchQueue } from '../store/watch-queue.js';
import { present, type RegistryContext } from './context.js';
import { list, parseResourceVersion, parseSelection } from './list.js';
import { LiveObjects } from './past-revisions.js';
import { storeCall, toApiError } from './storage-errors.js';

export interface WatchOptions {
  resourceVersion?: string;
  labelSelector?: string;
  fieldSelector?: string;
  allowWatchBookmarks?: boolean;
  /**
   * client-go's watch-list: true sends the current state as ADDED (at least as new as
   * resourceVersion), then, with allowWatchBookmarks, a BOOKMARK annotated
   * `k8s.io/initial-events-end: "true"` at its revision; false sends changes only (from
   * resourceVersion, else from now). Undefined: kube's older rule (initial events without a resourceVersion).
   */
  sendInitialEvents?: boolean;
  bookmarkIntervalMs?: number;
  /** Keeps only objects the caller may see; an object leaving it is sent as DELETED. Marks a restricted reader (list.ts). */
  filter?: Matcher;
}

export interface RegistryWatch extends AsyncIterable<WatchEvent<KubeObject | Status>> {
  stop(): void;
  /**
   * Settles once the watch has started (its initial list read, its revision checked). Rejects with
   * a 503 ApiError when storage is out of reach, so the request can be answered 503 with
   * Retry-After, and with a 504 when a watch-list's resourceVersion is in the future; any other failure to start is the stream's one ERROR event, as kube sends it.
   */
  started: Promise<void>;
  /**
   * Calls `end`, with the 410 Status the watch ends on, once its reader fell more than 10,000
   * events behind, or more than 64 Mi characters for over 5 s (its queue overflowed: store/watch-queue.ts): synchronously, in the push that overflowed, so whoever
   * orders end reasons sees it when it happened. The events still queued are moot then: the
   * reader lists again. The iteration ends on the same error after them, for a reader that does not look here.
   */
  whenOverflowed(end: (status: Status) => void): void;
}

const maxPendingEvents = 10_000;
/** The initial objects wait in the output queue at most this many at a time (the rest when the client has taken half). */
const initialBatch = 1_000;
const defaultBookmarkIntervalMs = 60_000;

/**
 * A selector (or the reader's permissions) turns changes into arrivals and departures: an object
 * that starts matching is ADDED, one that stops matching is DELETED carrying its previous version
 * (the one the reader could see) at the event's revision, as kube's cacher sends it.
 */
function translate(e: StoreEvent<StoredApiObject>, match: Matcher | undefined): WatchEvent<KubeObject> | undefined {
  if (!match) return shared(e, e.type, false);
  const now = match(e.object);
  const before = e.prevObject ? match(e.prevObject) : now;
  if (e.type === 'ADDED') return now ? shared(e, 'ADDED', false) : undefined;
  if (e.type === 'DELETED') return before ? shared(e, 'DELETED', e.prevObject !== undefined && !now) : undefined;
  if (now && before) return shared(e, 'MODIFIED', false);
  if (now) return shared(e, 'ADDED', false);
  if (before) return shared(e, 'DELETED', true);
  return undefined;
}

/**
 * The watch events made of each store event, by type and version: the store's watchers share one
 * store event per write (store/log/log-record.ts), so every watch sending the same change sends the
 * same event object, and a route encodes it once for all of them (server/routes/watch.ts), as kube's
 * cacher serializes an event once per format. Frozen: no reader may change what others send.
 */
const translated = new WeakMap<StoreEvent<StoredApiObject>, Map<string, WatchEvent<KubeObject>>>();

function shared(e: StoreEvent<StoredApiObject>, type: WatchEvent<KubeObject>['type'], previous: boolean): WatchEvent<KubeObject> {
  let made = translated.get(e);
  if (!made) translated.set(e, (made = new Map()));
  const key = previous ? `${type}/previous` : type;
  let event = made.get(key);
  if (!event) {
    event = Object.freeze({ type, object: Object.freeze(present(previous ? atRevision(e.prevObject!, e.revision) : e.object)) });
    made.set(key, event);
  }
  return event;
}

/** The object as it was, with the resourceVersion of the event that took it away. */
function atRevision(obj: StoredApiObject, revision: number): StoredApiObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } };
}

/** The annotation of the bookmark that ends a watch-list's initial events. */
export const initialEventsEnd = 'k8s.io/initial-events-end';

/**
 * The registry watch's state; `enter` moves it, and nothing else. Invariants:
 * - Starting: `started` pending (the initial list, the store watch's compaction check). A store
 *   watch that starts after the end is stopped as it arrives (`enter`), so none is left behind.
 * - Streaming {sw}: `started` resolved; the initial objects go out as the reader takes them, then
 *   the store watch's events in revision order, each after `start`; bookmarks only from here.
 * - Ended: the output queue is closed (stop, the store watch's end, a failure, an overflow); the
 *   store watch and the bookmark timer are stopped. Final.
 */
type RegistryWatchState = { name: 'Starting' } | { name: 'Streaming'; sw: StoreWatch<StoredApiObject>; bookmarks?: NodeJS.Timeout } | { name: 'Ended' };

/**
 * Starts a watch. Without a resourceVersion (or with "0") it first sends the current objects as
 * ADDED (see sendInitialEvents). A revision older than the retained history ends in one ERROR
 * event with a 410 Status. Selectors are parsed now: a mistake throws (400) before anything starts.
 */
export function watch(ctx: RegistryContext, opts: WatchOptions = {}): RegistryWatch {
  return new ApiWatch(ctx, opts);
}

class ApiWatch implements RegistryWatch {
  private state: RegistryWatchState = { name: 'Starting' };
  readonly started: Promise<void>;
  private readonly out: WatchQueue<WatchEvent<KubeObject | Status>>;
  private readonly match: Matcher | undefined;
  private readonly from: number | undefined;
  private settle!: { ok(): void; fail(err: unknown): void };
  /** Set once, by the overflow; `onOverflow` hears of it. */
  private overflowStatus: Status | undefined;
  private onOverflow: (status: Status) => void = () => {};

  constructor(
    private readonly ctx: RegistryContext,
    private readonly opts: WatchOptions,
  ) {
    ({ match: this.match } = parseSelection(opts));
    this.from = parseResourceVersion(opts.resourceVersion);
    this.out = new WatchQueue(maxPendingEvents, () => this.enter({ name: 'Ended' }));
    this.started = new Promise<void>((ok, fail) => (this.settle = { ok, fail }));
    // Whoever does not look at `started` hears of a failure from the iteration instead.
    this.started.catch(() => {});
    void this.run();
  }

  stop(): void {
    this.out.end();
  }

  whenOverflowed(end: (status: Status) => void): void {
    this.onOverflow = end;
    if (this.overflowStatus) end(this.overflowStatus);
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent<KubeObject | Status>> {
    return this.out[Symbol.asyncIterator]();
  }

  /** The one place the state changes; entering Ended stops what Streaming started, and a store watch that arrives after the end. */
  private enter(next: RegistryWatchState): void {
    const prev = this.state;
    if (prev.name === 'Ended') {
      if (next.name === 'Streaming') next.sw.stop();
      return;
    }
    this.state = next;
    if (next.name === 'Streaming') this.settle.ok();
    if (next.name === 'Ended' && prev.name === 'Streaming') {
      prev.sw.stop();
      if (prev.bookmarks) clearInterval(prev.bookmarks);
    }
  }

  private async run(): Promise<void> {
    try {
      const { start, initial } = await this.beginning();
      if (this.out.closed) return this.settle.ok();
      // Events up to the current revision are history: a restricted reader sees past-revisions.ts's share of it.
      const { filter } = this.opts;
      const until = this.from !== undefined ? await storeCall(this.ctx, '', () => this.ctx.store.currentRevision()) : undefined;
      const past = until !== undefined && filter ? { until, live: new LiveObjects(this.ctx, filter) } : undefined;
      const sw = this.ctx.store.watch<StoredApiObject>(this.ctx.prefix, start);
      try {
        await sw.started;
      } catch (err) {
        sw.stop();
        throw err;
      }
      this.enter({ name: 'Streaming', sw });
      if (this.state.name !== 'Streaming') return this.settle.ok();
      if (initial && !(await this.sendInitial(initial))) return;
      this.startBookmarks(this.state);
      for await (const e of sw) {
        // History (a resourceVersion far back) is fed as the client takes it, as the initial list
        // is: however long, it is no client falling behind. Changes made since overflow as ever.
        if (until !== undefined && e.revision <= until && !this.out.hasRoom(initialBatch - 1, pendingWeight.max / 2)) await this.out.room(initialBatch / 2, pendingWeight.max / 4);
        const event = translate(e, this.match);
        if (!event) continue;
        if (past && e.revision <= past.until && !(await past.live.readable(e.prevObject && e.type !== 'ADDED' ? e.prevObject : e.object))) continue;
        this.send(event, e.chars);
      }
      this.out.end();
    } catch (err) {
      this.failed(err);
    }
  }

  /** Where the watch starts: after the initial list's revision (sending it first), the given resourceVersion, or now. */
  private async beginning(): Promise<{ start: number; initial?: { items: KubeObject[]; revision: string } }> {
    const { from, opts, ctx } = this;
    if (opts.sendInitialEvents ?? from === undefined) {
      // With sendInitialEvents a resourceVersion is a floor (NotOlderThan): 504 when it is in the future.
      const floor = opts.sendInitialEvents && from !== undefined ? { resourceVersion: String(from), resourceVersionMatch: 'NotOlderThan' } : {};
      const current = await list(ctx, { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, filter: opts.filter, ...floor });
      const initial = { items: current.items, revision: current.metadata.resourceVersion };
      return { start: Number(initial.revision), initial };
    }
    return { start: from ?? (await storeCall(ctx, '', () => ctx.store.currentRevision())) };
  }

  /**
   * The initial objects go out as the client takes them (there may be more than the queue holds);
   * changes made meanwhile wait in the store watch's queue, whose overflow is a 410. False when the
   * watch ended meanwhile.
   */
  private async sendInitial(initial: { items: KubeObject[]; revision: string }): Promise<boolean> {
    for (const object of initial.items) {
      if (this.out.pending >= initialBatch) await this.out.room(initialBatch / 2);
      if (this.out.closed) return false;
      this.send({ type: 'ADDED', object });
    }
    if (this.opts.sendInitialEvents && this.opts.allowWatchBookmarks) {
      const { apiVersion, kind } = this.ctx.model.info;
      this.send({ type: 'BOOKMARK', object: { apiVersion, kind, metadata: { resourceVersion: initial.revision, annotations: { [initialEventsEnd]: 'true' } } } });
    }
    return true;
  }

  private startBookmarks(streaming: RegistryWatchState): void {
    if (!this.opts.allowWatchBookmarks || streaming.name !== 'Streaming') return;
    const { apiVersion, kind } = this.ctx.model.info;
    const { sw } = streaming;
    streaming.bookmarks = setInterval(() => {
      this.send({ type: 'BOOKMARK', object: { apiVersion, kind, metadata: { resourceVersion: String(sw.progress()) } } });
    }, this.opts.bookmarkIntervalMs ?? defaultBookmarkIntervalMs);
    streaming.bookmarks.unref();
  }

  /** Queues an event of this weight (store/watch-queue.ts); an open queue that refuses it overflowed (the queue fails itself), which is said at once. */
  private send(event: WatchEvent<KubeObject | Status>, weight = 0): void {
    if (this.out.closed || this.out.push(event, weight)) return;
    const status = toApiError(new StorageError('WatchOverflow', '', `watcher fell ${this.out.overflowed ?? `more than ${maxPendingEvents} events behind`}`), this.ctx, '');
    if (!(status instanceof ApiError) || this.overflowStatus) return;
    this.overflowStatus = status.toStatus();
    this.onOverflow(this.overflowStatus);
  }

  /**
   * Storage out of reach (503) and a resourceVersion in the future (504) before the watch started
   * are answered as HTTP errors, as kube does; any other API error is the stream's one ERROR event.
   */
  private failed(err: unknown): void {
    const apiErr = toApiError(err, this.ctx, '');
    if (this.state.name === 'Starting' && apiErr instanceof ApiError && (apiErr.code === 503 || apiErr.code === 504)) {
      this.settle.fail(apiErr);
      this.out.end();
      return;
    }
    this.settle.ok();
    if (apiErr instanceof ApiError) {
      this.send({ type: 'ERROR', object: apiErr.toStatus() });
      this.out.end();
    } else this.out.fail(err);
  }
}
