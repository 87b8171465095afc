/** Streams a watch as newline-delimited JSON events, as Tables when kubectl get --watch asks. */
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, internalError, type Status } from '../../api/errors.js';
import type { KubeObject, WatchEvent } from '../../api/types.js';
import type { ResourceRegistry } from '../../registry/resource-registry.js';
import { toApiError } from '../../registry/storage-errors.js';
import { negotiate } from '../content.js';
import { identityOf } from '../auth/guard.js';
import type { ReadQuery } from '../query.js';
import { partialObject } from '../partial-metadata.js';
import { toTable } from '../table.js';
import type { WatchKeeper } from '../watch-keeper.js';
import { watchDurationMs, type WatchSlots } from '../watch-limits.js';

/** Watches in progress (so shutdown can end them instead of waiting out their timeouts), their places and their keys' checks. */
export interface WatchHub {
  active: Set<{ stop(): void }>;
  bookmarkIntervalMs?: number;
  slots: WatchSlots;
  keeper: WatchKeeper;
}

export async function serveWatch(
  req: FastifyRequest,
  reply: FastifyReply,
  r: ResourceRegistry,
  q: ReadQuery,
  hub: WatchHub,
  filter: ((obj: KubeObject) => boolean) | undefined,
): Promise<void> {
  const format = negotiate(req.headers.accept, 'object');
  const who = identityOf(req);
  const release = hub.slots.take(who);
  const kept = hub.keeper.keep(req.headers.authorization, r.info.plural, who);
  try {
    await stream();
  } finally {
    hub.keeper.release(kept);
    release();
  }

  async function stream(): Promise<void> {
    // Parses selectors and the resourceVersion now, so mistakes are a 400 rather than a broken stream.
    const watch = r.watch({
      resourceVersion: q.resourceVersion,
      labelSelector: q.labelSelector,
      fieldSelector: q.fieldSelector,
      allowWatchBookmarks: q.allowWatchBookmarks,
      ...(q.sendInitialEvents !== undefined ? { sendInitialEvents: q.sendInitialEvents } : {}),
      ...(filter ? { filter } : {}),
      ...(hub.bookmarkIntervalMs ? { bookmarkIntervalMs: hub.bookmarkIntervalMs } : {}),
    });
    // Storage out of reach (503 with Retry-After) and a future resourceVersion (504) are answered before the stream begins.
    try {
      await watch.started;
    } catch (err) {
      watch.stop();
      throw err;
    }
    // Every way a watch ends (its time, its client, its key, its queue's overflow, shutdown) goes
    // through stop, which also wakes a wait for a client to take what was written: it may never.
    let stopped = false;
    let wake: () => void = () => {};
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const stop = () => {
      stopped = true;
      watch.stop();
      wake();
    };
    // A client too slow for its queue: what is still queued is moot, it lists again after the 410.
    let overflow: Status | undefined;
    void watch.overflowed.then((status) => {
      overflow = status;
      req.log.warn({ resource: r.info.plural, user: who.name }, 'watch client fell more than 10,000 events behind; ending its watch with 410');
      stop();
    });
    const entry = { stop };
    hub.active.add(entry);
    kept.whenEnded(stop);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const timer = setTimeout(stop, watchDurationMs(q.timeoutSeconds, hub.slots.limits.minRequestTimeoutSeconds));
    // The connection keeps the process alive while the watch lasts; the timer alone must not.
    timer.unref();
    res.on('close', stop);
    // A client gone while the watch started sent its 'close' before anyone listened: without this,
    // a watch that has nothing to send would hold its places (key, user, total) until its time ends.
    if (res.destroyed) stop();
    let failure: Status | undefined;
    try {
      for await (const event of watch) {
        if (overflow) break;
        // Nothing newer than the last check of the key goes out before another check.
        const revision = revisionOf(event);
        if (revision !== undefined && !(await kept.admit(revision, () => !res.destroyed && !stopped))) break;
        if (kept.ended || overflow) break;
        if (!write(res, encode(event))) await Promise.race([drained(res), woken]);
        if (res.destroyed || stopped) break;
      }
    } catch (err) {
      // The iteration's own end: the overflow (after the queued events, if they were all taken first) or a bug.
      const apiErr = toApiError(err, r.ctx, '');
      if (apiErr instanceof ApiError) failure = apiErr.toStatus();
      else {
        req.log.error({ err }, 'watch failed');
        failure = internalError('the watch failed').toStatus();
      }
    } finally {
      clearTimeout(timer);
      watch.stop();
    }
    try {
      // A watch its key no longer allows ends on a Status saying why, as a refused request would;
      // one whose client fell too far behind on a 410, after what was written (it lists again).
      const ending = kept.ended ?? overflow ?? failure;
      if (ending) write(res, `${JSON.stringify({ type: 'ERROR', object: ending })}\n`);
      await finish(res, hub.slots.limits.endGraceMs, req.log);
    } finally {
      hub.active.delete(entry);
    }
  }

  function encode(event: WatchEvent<KubeObject | Status>): string {
    if (format === 'json' || format === 'yaml' || event.type === 'ERROR' || event.type === 'BOOKMARK') return `${JSON.stringify(event)}\n`;
    const obj = event.object as KubeObject;
    if (format === 'partial') return `${JSON.stringify({ type: event.type, object: partialObject(obj) })}\n`;
    // Every event carries the column definitions: kubectl get --watch-only has no list to take them from.
    const table = toTable(r.info.kind, [obj], {
      metadata: { resourceVersion: obj.metadata.resourceVersion ?? '' },
      includeObject: q.includeObject,
    });
    return `${JSON.stringify({ type: event.type, object: table })}\n`;
  }
}

/** The revision an event shows its reader (bookmarks show only a revision, errors none). */
function revisionOf(event: WatchEvent<KubeObject | Status>): number | undefined {
  if (event.type === 'BOOKMARK' || event.type === 'ERROR') return undefined;
  const rv = Number((event.object as KubeObject).metadata.resourceVersion);
  return Number.isSafeInteger(rv) ? rv : undefined;
}

function write(res: NodeJS.WritableStream & { destroyed: boolean }, chunk: string): boolean {
  if (res.destroyed) return true;
  return res.write(chunk);
}

/**
 * Ends the response once the client has taken what was written. A client that has not within
 * `graceMs` (it stopped reading) has its connection closed: the watch is over, and waiting for it
 * would keep the watch's place (watch-limits.ts) and its buffers for as long as the client likes.
 * The end is written only after the drain: an ended response counts as idle to Node's
 * closeIdleConnections, which a shutdown calls, and would be cut with what it still buffers.
 */
async function finish(res: ServerResponse, graceMs: number, log: FastifyBaseLogger): Promise<void> {
  if (res.destroyed) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)));
  try {
    if (res.writableNeedDrain && (await Promise.race([drained(res).then(() => false), late]))) {
      log.warn({ graceMs }, 'watch client did not take the end of its watch in time; closing its connection');
      res.destroy();
      return;
    }
  } finally {
    clearTimeout(timer);
  }
  if (!res.destroyed) res.end();
}

/** Waits until the client has taken what was written, or has gone. */
function drained(res: NodeJS.EventEmitter & { destroyed: boolean }): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
    // A response already torn down emits neither again.
    if (res.destroyed) done();
  });
}
