/**
 * One watch over HTTP, whatever route serves it (Teams, keys, metadata-only, the core kinds listed
 * for kubectl): it holds a place under the per-key, per-user and server-wide limits, its key is
 * followed by the watch keeper, and it streams its source's events as newline-delimited JSON.
 * Every way it ends (its time, its client, its key, its queue's overflow, a failure, shutdown)
 * is one call of `end(reason)`, and the first reason is the one the stream ends on.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, internalError, type Status } from '../../api/errors.js';
import type { KubeObject, WatchEvent } from '../../api/types.js';
import type { Resource } from '../../auth/roles.js';
import { identityOf } from '../auth/guard.js';
import { impersonationAsked } from '../auth/impersonate-headers.js';
import type { WatchHub } from './watch-hub.js';
import type { KeptWatch } from './watch-keeper.js';
import { watchDurationMs } from './watch-limits.js';
import { drained, finishStream, openStream, writeLine } from './watch-response.js';
import { earlierWarnings } from '../reply.js';
import { whenGone } from '../connection-gone.js';

export type WatchEventOut = WatchEvent<KubeObject | Status>;

/** What a watch streams: the registry's watch of a kind (registry/watch.ts), or a listed kind's watch of nothing. */
export interface WatchSource extends AsyncIterable<WatchEventOut> {
  /** Settles once the watch has started; a rejection is answered as an HTTP error, not a stream. */
  started: Promise<void>;
  /**
   * Calls `end` with a 410 Status when the reader fell too far behind (what is still queued is
   * moot), at once, in the call that found the overflow: a reason given later, even in the same
   * tick, comes second.
   */
  whenOverflowed(end: (status: Status) => void): void;
  stop(): void;
}

/** What a route gives a watch: the kind its key's rights are checked on, its source and how an event is written. */
export interface WatchSpec {
  /** The kind whose `watch` the key must keep; undefined for a kind outside this API (its key alone is checked). */
  resource: Resource | undefined;
  /** Starts the source; it may throw (a bad selector is a 400), after the place was taken, as kube checks limits first. */
  open(): WatchSource;
  /** One event as the line the client asked for (JSON, a Table, PartialObjectMetadata). */
  encode(event: WatchEventOut): string | Buffer;
  /** The error a failure of the source's iteration is, as the API says it (a storage error's Status). */
  apiError(err: unknown): unknown;
  timeoutSeconds: number | undefined;
}

/**
 * Why a watch ends. The reasons carrying a Status end the stream with it as an `ERROR` event (the
 * 401/403 a request with the key would get now, a 410 to list again); the others end it quietly
 * and clients reconnect. `refused`: the source did not start, answered as an HTTP error instead.
 */
export type EndReason =
  | { why: 'timeout' | 'client-gone' | 'shutdown' | 'source-ended' | 'refused' }
  | { why: 'key-refused' | 'overflow' | 'failed'; status: Status };

/**
 * The connection's state: `respond` moves it from Starting to Streaming, `end` out of either (the
 * one way a watch ends), `close` to Closed; nothing else moves it. Invariants:
 * - Starting: a place is held and the key kept; the source is starting; nothing is answered yet.
 * - Streaming: 200 was written; an event of revision R goes out only after the key was found
 *   still allowing the watch at R or later (KeptWatch.admit), and only while Streaming.
 * - Ending {reason}: set once, by the first reason: no more events are written (queued ones are
 *   dropped), the source is stopped, and a wait for the client to drain is woken (it may never).
 *   The reason's Status, if any, is the last line; then the client gets `endGraceMs` to take it.
 * - Closed {reason}: the response is ended or its connection destroyed; the place, the key check
 *   and the timer are given back. Final.
 */
export type ConnectionState = { name: 'Starting' } | { name: 'Streaming' } | { name: 'Ending'; reason: EndReason } | { name: 'Closed'; reason: EndReason };

/** Serves one watch from its place to its end; a refusal before it streams (429, 400, 503, 504) is thrown as the request's error. */
export async function serveWatch(req: FastifyRequest, reply: FastifyReply, hub: WatchHub, spec: WatchSpec): Promise<void> {
  await new WatchConnection(req, reply, hub, spec).serve();
}

export class WatchConnection {
  private state: ConnectionState = { name: 'Starting' };
  private readonly release: () => void;
  private readonly kept: KeptWatch;
  private source: WatchSource | undefined;
  private timer: NodeJS.Timeout | undefined;
  private wake: () => void = () => {};
  /** Resolves at the end: a wait for the client to take what was written stops waiting. */
  private readonly ended = new Promise<void>((resolve) => (this.wake = resolve));

  /** Takes the watch's place (429 when none is left) and has its key kept. */
  constructor(
    private readonly req: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly hub: WatchHub,
    private readonly spec: WatchSpec,
  ) {
    const who = identityOf(req);
    this.release = hub.slots.take(who);
    this.kept = hub.keeper.keep(req.headers.authorization, spec.resource, who, impersonationAsked(req.raw));
    hub.add(this);
    this.kept.whenEnded((status) => this.end({ why: 'key-refused', status }));
  }

  /** The one transition out of Starting or Streaming; later reasons change nothing. */
  end(reason: EndReason): void {
    const { name } = this.state;
    if (name !== 'Starting' && name !== 'Streaming') return;
    this.state = { name: 'Ending', reason };
    if (reason.why === 'overflow') {
      this.req.log.warn({ resource: this.spec.resource, user: identityOf(this.req).name }, `${reason.status.message ?? 'watch client fell too far behind'}; ending its watch with 410`);
    }
    clearTimeout(this.timer);
    this.source?.stop();
    this.wake();
  }

  async serve(): Promise<void> {
    try {
      await this.start();
      const res = this.respond();
      if (this.state.name === 'Streaming') await this.stream(res);
      const { reason } = this.state as { reason: EndReason };
      if ('status' in reason) writeLine(res, `${JSON.stringify({ type: 'ERROR', object: reason.status })}\n`);
      await finishStream(res, this.hub.slots.limits.endGraceMs, this.req.log);
    } finally {
      this.close();
    }
  }

  /** Starts the source: selectors and the resourceVersion are judged now, so mistakes are a 400, storage out of reach a 503, a future watch-list a 504. */
  private async start(): Promise<void> {
    try {
      this.source = this.spec.open();
      if (this.state.name !== 'Starting') this.source.stop();
      await this.source.started;
    } catch (err) {
      this.end({ why: 'refused' });
      throw err;
    }
    this.source.whenOverflowed((status) => this.end({ why: 'overflow', status }));
  }

  /** Takes over the response (200, streamed) and starts the watch's time; a watch ended while starting still answers, with its Status. */
  private respond(): ServerResponse {
    this.reply.hijack();
    const res = this.reply.raw;
    // A hijacked reply sends none of fastify's headers: the Warning set at authentication goes along here.
    openStream(res, earlierWarnings(this.reply));
    // The response's end or the connection's (a watch pipelined behind another request never sees
    // its response close when the connection is cut), or gone already while the watch started:
    // without these, a watch with nothing to send would hold its places until its time ends.
    whenGone(this.req.raw, res, () => this.end({ why: 'client-gone' }));
    if (this.state.name !== 'Starting') return res;
    this.state = { name: 'Streaming' };
    this.timer = setTimeout(() => this.end({ why: 'timeout' }), watchDurationMs(this.spec.timeoutSeconds, this.hub.slots.limits.minRequestTimeoutSeconds));
    // The connection keeps the process alive while the watch lasts; the timer alone must not.
    this.timer.unref();
    return res;
  }

  /** Writes events while Streaming, each after its key's check, waiting for the client when it lags. */
  private async stream(res: ServerResponse): Promise<void> {
    const streaming = () => this.state.name === 'Streaming' && !res.destroyed;
    try {
      for await (const event of this.source!) {
        if (!streaming()) break;
        // Nothing newer than the last check of the key goes out before another check.
        const revision = revisionOf(event);
        if (revision !== undefined && !(await this.kept.admit(revision, streaming))) break;
        if (!streaming()) break;
        if (!writeLine(res, this.spec.encode(event))) await Promise.race([drained(res), this.ended]);
      }
      this.end({ why: res.destroyed ? 'client-gone' : 'source-ended' });
    } catch (err) {
      // The iteration's own end: the overflow (after the queued events, if all were taken first) or a bug.
      this.end({ why: 'failed', status: this.failure(err) });
    }
  }

  private failure(err: unknown): Status {
    const apiErr = this.spec.apiError(err);
    if (apiErr instanceof ApiError) return apiErr.toStatus();
    this.req.log.error({ err }, 'watch failed');
    return internalError('the watch failed').toStatus();
  }

  private close(): void {
    // Only a throw before the stream began (the response could not be taken over) gets here without an end.
    this.end({ why: 'refused' });
    const { reason } = this.state as { reason: EndReason };
    this.state = { name: 'Closed', reason };
    clearTimeout(this.timer);
    this.source?.stop();
    this.hub.delete(this);
    this.hub.keeper.release(this.kept);
    this.release();
  }
}

/** The revision an event shows its reader (bookmarks show only a revision, errors none). */
function revisionOf(event: WatchEventOut): number | undefined {
  if (event.type === 'BOOKMARK' || event.type === 'ERROR') return undefined;
  const rv = Number((event.object as KubeObject).metadata.resourceVersion);
  return Number.isSafeInteger(rv) ? rv : undefined;
}
