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
  const encode = (event: WatchEventOut): string => {
    if (format === 'json' || format === 'yaml' || event.type === 'ERROR' || event.type === 'BOOKMARK') return `${JSON.stringify(event)}\n`;
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
