/** WATCH: initial state, then every change in revision order, filtered by selectors, with bookmarks. */
import { ApiError, type Status } from '../api/errors.js';
import type { Matcher } from '../api/selectors.js';
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject, WatchEvent } from '../api/types.js';
import { StorageError } from '../store/errors.js';
import type { StoreEvent, StoreWatch } from '../store/types.js';
import { WatchQueue } from '../store/watch-queue.js';
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
   * Resolves, with the 410 Status the watch ends on, once its reader fell more than 10,000 events
   * behind (its queue overflowed). The events still queued are moot then: the reader lists again.
   * The iteration ends on the same error after them, for a reader that does not look here.
   */
  overflowed: Promise<Status>;
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
  if (!match) return { type: e.type, object: present(e.object) };
  const now = match(e.object);
  const before = e.prevObject ? match(e.prevObject) : now;
  if (e.type === 'ADDED') return now ? { type: 'ADDED', object: present(e.object) } : undefined;
  if (e.type === 'DELETED') return before ? { type: 'DELETED', object: present(e.prevObject && !now ? atRevision(e.prevObject, e.revision) : e.object) } : undefined;
  if (now && before) return { type: 'MODIFIED', object: present(e.object) };
  if (now) return { type: 'ADDED', object: present(e.object) };
  if (before) return { type: 'DELETED', object: present(atRevision(e.prevObject!, e.revision)) };
  return undefined;
}

/** The object as it was, with the resourceVersion of the event that took it away. */
function atRevision(obj: StoredApiObject, revision: number): StoredApiObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } };
}

/** The annotation of the bookmark that ends a watch-list's initial events. */
export const initialEventsEnd = 'k8s.io/initial-events-end';

/**
 * Starts a watch. Without a resourceVersion (or with "0") it first sends the current objects as
 * ADDED (see sendInitialEvents). A revision older than the retained history ends in one ERROR
 * event with a 410 Status.
 */
export function watch(ctx: RegistryContext, opts: WatchOptions = {}): RegistryWatch {
  const { match } = parseSelection(opts);
  const from = parseResourceVersion(opts.resourceVersion);
  let storeWatch: StoreWatch<StoredApiObject> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const out = new WatchQueue<WatchEvent<KubeObject | Status>>(maxPendingEvents, () => {
    storeWatch?.stop();
    if (timer) clearInterval(timer);
  });
  let overflow!: (status: Status) => void;
  const overflowed = new Promise<Status>((resolve) => (overflow = resolve));
  /** Queues an event; an open queue that refuses it overflowed (the queue fails itself), which is said at once. */
  const send = (event: WatchEvent<KubeObject | Status>): void => {
    if (out.closed || out.push(event)) return;
    const status = toApiError(new StorageError('WatchOverflow', '', `watcher fell more than ${maxPendingEvents} events behind`), ctx, '');
    if (status instanceof ApiError) overflow(status.toStatus());
  };

  let started = false;
  let startOk!: () => void;
  let startFailed!: (err: unknown) => void;
  const startedPromise = new Promise<void>((resolve, reject) => {
    startOk = () => {
      started = true;
      resolve();
    };
    startFailed = reject;
  });
  startedPromise.catch(() => {});

  const run = async () => {
    try {
      let start = from;
      const { apiVersion, kind } = ctx.model.info;
      let initial: { items: KubeObject[]; revision: string } | undefined;
      if (opts.sendInitialEvents ?? from === undefined) {
        // With sendInitialEvents a resourceVersion is a floor (NotOlderThan): 504 when it is in the future.
        const floor = opts.sendInitialEvents && from !== undefined ? { resourceVersion: String(from), resourceVersionMatch: 'NotOlderThan' } : {};
        const current = await list(ctx, { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, filter: opts.filter, ...floor });
        initial = { items: current.items, revision: current.metadata.resourceVersion };
        start = Number(initial.revision);
      } else if (start === undefined) {
        start = await storeCall(ctx, '', () => ctx.store.currentRevision());
      }
      if (out.closed) return startOk();
      // Events up to the current revision are history: a restricted reader sees past-revisions.ts's share of it.
      const past = from !== undefined && opts.filter ? { until: await ctx.store.currentRevision(), live: new LiveObjects(ctx, opts.filter) } : undefined;
      const sw = ctx.store.watch<StoredApiObject>(ctx.prefix, start);
      storeWatch = sw;
      await sw.started;
      startOk();
      if (initial) {
        // The initial objects go out as the client takes them (there may be more than the queue
        // holds); changes made meanwhile wait in the store watch's queue, whose overflow is a 410.
        for (const object of initial.items) {
          if (out.pending >= initialBatch) await out.room(initialBatch / 2);
          if (out.closed) return;
          send({ type: 'ADDED', object });
        }
        if (opts.sendInitialEvents && opts.allowWatchBookmarks) {
          send({ type: 'BOOKMARK', object: { apiVersion, kind, metadata: { resourceVersion: initial.revision, annotations: { [initialEventsEnd]: 'true' } } } });
        }
      }
      if (opts.allowWatchBookmarks) {
        timer = setInterval(() => {
          send({ type: 'BOOKMARK', object: { apiVersion, kind, metadata: { resourceVersion: String(sw.progress()) } } });
        }, opts.bookmarkIntervalMs ?? defaultBookmarkIntervalMs);
        timer.unref();
      }
      for await (const e of sw) {
        const event = translate(e, match);
        if (!event) continue;
        if (past && e.revision <= past.until && !(await past.live.readable(e.prevObject && e.type !== 'ADDED' ? e.prevObject : e.object))) continue;
        send(event);
      }
      out.end();
    } catch (err) {
      const apiErr = toApiError(err, ctx, '');
      // Storage out of reach (503) and a resourceVersion in the future (504) are answered as HTTP errors, as kube does.
      if (!started && apiErr instanceof ApiError && (apiErr.code === 503 || apiErr.code === 504)) {
        startFailed(apiErr);
        out.end();
        return;
      }
      startOk();
      if (apiErr instanceof ApiError) {
        send({ type: 'ERROR', object: apiErr.toStatus() });
        out.end();
      } else out.fail(err);
    }
  };
  void run();
  return { stop: () => out.end(), started: startedPromise, overflowed, [Symbol.asyncIterator]: () => out[Symbol.asyncIterator]() };
}
