/** Streams a watch as newline-delimited JSON events, as Tables when kubectl get --watch asks. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tooManyRequests, type Status } from '../../api/errors.js';
import type { KubeObject, WatchEvent } from '../../api/types.js';
import type { ResourceRegistry } from '../../registry/resource-registry.js';
import type { RegistryWatch } from '../../registry/watch.js';
import { negotiate } from '../content.js';
import { identityOf } from '../guard.js';
import type { ReadQuery } from '../query.js';
import { partialObject } from '../partial-metadata.js';
import { toTable } from '../table.js';

/** Watches in progress (so shutdown can end them instead of waiting out their timeouts) and their settings. */
export interface WatchHub {
  active: Set<RegistryWatch>;
  bookmarkIntervalMs?: number;
  /** Open watches per access key name; a key leaves the map when its last watch ends. */
  perKey: Map<string, number>;
  /** The most watches one key may hold open at once; one more is 429. */
  maxPerKey: number;
}

/** Each watch holds a connection, a queue of up to 10,000 events and a share of every write's fan-out. */
export const defaultMaxWatchesPerKey = 100;

/** kube-apiserver's default: watches end after 30 to 60 minutes, and clients reconnect. */
const defaultTimeoutSeconds = 1800;

export async function serveWatch(
  req: FastifyRequest,
  reply: FastifyReply,
  r: ResourceRegistry,
  q: ReadQuery,
  hub: WatchHub,
  filter: (obj: KubeObject) => boolean,
): Promise<void> {
  const format = negotiate(req.headers.accept, 'object');
  const key = identityOf(req).keyName;
  const open = hub.perKey.get(key) ?? 0;
  if (open >= hub.maxPerKey) {
    throw tooManyRequests(`too many watches open for this access key (the limit is ${hub.maxPerKey}); close one or retry later`, 1);
  }
  hub.perKey.set(key, open + 1);
  try {
    await stream();
  } finally {
    const left = (hub.perKey.get(key) ?? 1) - 1;
    if (left > 0) hub.perKey.set(key, left);
    else hub.perKey.delete(key);
  }

  async function stream(): Promise<void> {
    // Parses selectors and the resourceVersion now, so mistakes are a 400 rather than a broken stream.
    const watch = r.watch({
      resourceVersion: q.resourceVersion,
      labelSelector: q.labelSelector,
      fieldSelector: q.fieldSelector,
      allowWatchBookmarks: q.allowWatchBookmarks,
      ...(q.sendInitialEvents !== undefined ? { sendInitialEvents: q.sendInitialEvents } : {}),
      filter,
      ...(hub.bookmarkIntervalMs ? { bookmarkIntervalMs: hub.bookmarkIntervalMs } : {}),
    });
    // Storage out of reach (503 with Retry-After) and a future resourceVersion (504) are answered before the stream begins.
    try {
      await watch.started;
    } catch (err) {
      watch.stop();
      throw err;
    }
    hub.active.add(watch);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const timer = setTimeout(() => watch.stop(), (q.timeoutSeconds ?? defaultTimeoutSeconds) * 1000);
    // The connection keeps the process alive while the watch lasts; the timer alone must not.
    timer.unref();
    res.on('close', () => watch.stop());
    try {
      for await (const event of watch) {
        if (!write(res, encode(event))) await drained(res);
        if (res.destroyed) break;
      }
    } finally {
      clearTimeout(timer);
      hub.active.delete(watch);
      watch.stop();
      if (!res.destroyed) res.end();
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

function write(res: NodeJS.WritableStream & { destroyed: boolean }, chunk: string): boolean {
  if (res.destroyed) return true;
  return res.write(chunk);
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
