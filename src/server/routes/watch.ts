/** The watch of a served kind: the registry's events, as JSON, Tables for kubectl get --watch, or metadata only. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KubeObject } from '../../api/types.js';
import type { ResourceRegistry } from '../../registry/resource-registry.js';
import { toApiError } from '../../registry/storage-errors.js';
import { negotiate } from '../content.js';
import type { ReadQuery } from '../query.js';
import { partialObject } from '../partial-metadata.js';
import { toTable } from '../table.js';
import { serveWatch, type WatchEventOut } from '../watch/watch-connection.js';
import type { WatchHub } from '../watch/watch-hub.js';

/**
 * An object's event as its JSON line, encoded once for every watch that sends it: the registry's
 * watches share one event object per change (registry/watch.ts), so with 500 watchers of a Team a
 * write is stringified and UTF-8 encoded once, not 500 times (each writes the same bytes). Only the
 * last events' lines are kept: the watchers of a change send it within moments of each other, and
 * one far behind encodes its own. Each line is a buffer of its own, not a slice of Node's shared
 * 8 KiB pool, which one kept line would hold whole.
 */
const recentLines = new Map<WatchEventOut, Buffer>();
const recentLinesKept = 256;
/**
 * And past the last few, at most this many bytes of them: 256 lines of 3 MiB objects would hold
 * 768 MiB after every watcher left (found by a review). The last lines are kept whatever their
 * size, so a burst of large writes is still encoded once for all its watchers (a bound by bytes
 * alone made each slower watcher encode every event again: found by the next review).
 */
const recentLinesBytes = 64 * 1024 * 1024;
const recentLinesAlways = 16;
let recentBytes = 0;

function jsonLine(event: WatchEventOut): string | Buffer {
  // Only the registry's shared events, which it freezes, are kept: a watch's initial objects and
  // the events of one catching up from the log are its own, and would push the shared ones out.
  if (!Object.isFrozen(event)) return `${JSON.stringify(event)}\n`;
  let line = recentLines.get(event);
  if (!line) {
    const pooled = Buffer.from(`${JSON.stringify(event)}\n`);
    line = Buffer.allocUnsafeSlow(pooled.length);
    pooled.copy(line);
    recentLines.set(event, line);
    recentBytes += line.length;
    while (recentLines.size > recentLinesKept || (recentBytes > recentLinesBytes && recentLines.size > recentLinesAlways)) {
      const [oldest, dropped] = recentLines.entries().next().value!;
      recentLines.delete(oldest);
      recentBytes -= dropped.length;
    }
  }
  return line;
}

/** Serves `?watch` on a collection of `r`, showing only what `filter` keeps (undefined: a reader who sees everything). */
export function serveResourceWatch(
  req: FastifyRequest,
  reply: FastifyReply,
  r: ResourceRegistry,
  q: ReadQuery,
  hub: WatchHub,
  filter: ((obj: KubeObject) => boolean) | undefined,
): Promise<void> {
  const format = negotiate(req.headers.accept, 'object');
  const encode = (event: WatchEventOut): string | Buffer => {
    if (event.type === 'ERROR' || event.type === 'BOOKMARK') return `${JSON.stringify(event)}\n`;
    if (format === 'json' || format === 'yaml') return jsonLine(event);
    const obj = event.object as KubeObject;
    if (format === 'partial') return `${JSON.stringify({ type: event.type, object: partialObject(obj) })}\n`;
    // Every event carries the column definitions: kubectl get --watch-only has no list to take them from.
    const table = toTable(r.info.kind, [obj], {
      metadata: { resourceVersion: obj.metadata.resourceVersion ?? '' },
      includeObject: q.includeObject,
    });
    return `${JSON.stringify({ type: event.type, object: table })}\n`;
  };
  return serveWatch(req, reply, hub, {
    resource: r.info.plural,
    timeoutSeconds: q.timeoutSeconds,
    encode,
    apiError: (err) => toApiError(err, r.ctx, ''),
    open: () =>
      r.watch({
        resourceVersion: q.resourceVersion,
        labelSelector: q.labelSelector,
        fieldSelector: q.fieldSelector,
        allowWatchBookmarks: q.allowWatchBookmarks,
        ...(q.sendInitialEvents !== undefined ? { sendInitialEvents: q.sendInitialEvents } : {}),
        ...(filter ? { filter } : {}),
        ...(hub.bookmarkIntervalMs ? { bookmarkIntervalMs: hub.bookmarkIntervalMs } : {}),
      }),
  });
}
