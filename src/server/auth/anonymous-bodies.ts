/**
 * Request bodies read before anyone is known: those of the gate's anonymous paths (sign-in's forms,
 * the token exchange, POST /auth/revoke, and the two that authenticate themselves by their body,
 * GitHub's alerts and the sidecar's webhook). Each route bounds one body; nothing bounded how many
 * the server read at once, so clients without a key could make it hold as many bodies as they had
 * connections open (a route's limit each, sent slowly until the request timeout). kube-apiserver
 * bounds its requests in flight server-wide (--max-requests-inflight); here the bound is on what
 * costs memory before a key is checked, a body being received:
 * - per client address (and, for IPv6, its /64 and /48 with their shares, client-address.ts): at
 *   most `perClient` bodies being received at once, so one address cannot take the server's room;
 * - for the whole server: at most `totalBytes` of bodies being received, each counted as the most it
 *   may be (its Content-Length, else the route's limit), so many addresses together cannot exhaust
 *   memory.
 * Beyond either, 429 with Retry-After: 1 before the body is read. The places come back once the
 * body has arrived (the content parser, `received`), or when the response ends however it ends (a
 * 413, a cut connection): a whole small body arrives with its headers, so a burst of clients behind
 * one proxy address holds its places for a moment each, while a slow sender holds its own only.
 * Routes with stricter bounds of their own keep them (GitHub's alerts: 2 per address until
 * answered). Requests with a key are not counted: the key answers for them.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../../api/errors.js';
import { ConcurrentLimit } from '../../auth/concurrent-limit.js';
import { budgetScopes, clientOf } from '../client-address.js';
import { maxBodyBytes } from '../body-limit.js';

export interface AnonymousBodyLimits {
  /** Bodies one client address reads at once (a /64 holds 4 addresses' share, a /48 16). */
  perClient: number;
  /** Bytes of anonymous bodies the server reads at once, each counted at the most it may be. */
  totalBytes: number;
}

/** Enough for a sign-in rush or a CI fleet's token exchanges (a few KiB each), and GitHub's 1 MiB alerts. */
export const defaultAnonymousBodyLimits: AnonymousBodyLimits = { perClient: 8, totalBytes: 32 * 1024 * 1024 };
/** The server bound may not be under the largest body an anonymous route takes (the sidecar's webhook: the server's 3 MiB), which it could then never admit. */
export const minAnonymousBodyBytes = maxBodyBytes;

/** The most a request's body may be, by its headers and its route's limit; 0 when it has none. */
export function bodyBound(headers: FastifyRequest['headers'], routeLimit: number): number {
  // Node refuses a request that sends both, or a Content-Length that is not a number (400).
  if (headers['transfer-encoding'] !== undefined) return routeLimit;
  const length = Number(headers['content-length'] ?? 0);
  return Math.min(Number.isSafeInteger(length) && length > 0 ? length : 0, routeLimit);
}

export class AnonymousBodies {
  private readonly byClient: ConcurrentLimit;
  private bytes = 0;
  /** The places of each request whose body is being received, by its raw request. */
  private readonly held = new WeakMap<object, () => void>();

  constructor(readonly limits: AnonymousBodyLimits = defaultAnonymousBodyLimits) {
    this.byClient = new ConcurrentLimit(limits.perClient, budgetScopes);
  }

  /** Takes the request's places until its body has arrived or its response ends, or throws 429; a request without a body takes none. */
  admit(req: FastifyRequest, reply: FastifyReply): void {
    const bound = bodyBound(req.headers, req.routeOptions.bodyLimit ?? 0);
    if (bound === 0) return;
    const client = clientOf(req);
    const full = this.byClient.full(client);
    if (full) throw tooManyRequests(`too many requests from this address${full.share === 1 ? '' : `'s network (${full.key})`} are sending a body at once; try again`, 1);
    if (this.bytes + bound > this.limits.totalBytes) throw tooManyRequests('the server is receiving as many request bodies from clients without a key as it allows at once; try again', 1);
    const giveBack = this.byClient.take(client);
    this.bytes += bound;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.held.delete(req.raw);
      giveBack();
      this.bytes -= bound;
    };
    this.held.set(req.raw, release);
    reply.raw.once('close', release);
  }

  /** The request's body has arrived whole: its places come back (a request that took none: nothing). */
  received(req: FastifyRequest): void {
    this.held.get(req.raw)?.();
  }
}
