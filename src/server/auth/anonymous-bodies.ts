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
 * - for the whole server: at most `totalBytes` of bodies being received, counted as they arrive
 *   (`metered`), so many addresses together cannot exhaust memory. A body whose declared length
 *   would not fit is refused before it is read; one that crosses the bound while arriving is cut
 *   with the same 429. Counted as declared instead, one-byte chunked bodies from a few addresses
 *   held the whole bound (found by a review: 32 bodies of one byte from one IPv6 /62). Forms (the
 *   routes of at most 64 KiB: revocations, token exchanges, sign-in) and webhooks (GitHub's
 *   alerts, 1 MiB; the sidecar's, 3 MiB) have a bound each, so neither can turn the other away.
 * Beyond either, 429 with Retry-After: 1: before the body is read when the address's places or the
 * declared length do not fit, else when a chunk crosses the bound. The places come back once the
 * body has arrived (the content parser, `received`), or when the response ends or the connection
 * goes, however that happens (connection-gone.ts). A whole small body arrives with its headers, so a
 * burst of clients behind one proxy address holds its places for a moment each, while a slow sender
 * holds its own. Routes with stricter bounds of their own keep them (GitHub's alerts: 2 per address
 * until handled). Requests to the paths that need a key are not counted: the key answers for them.
 */
import { Transform, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../../api/errors.js';
import { ConcurrentLimit } from '../../auth/concurrent-limit.js';
import { scopeWords } from '../../auth/failure-limit.js';
import { budgetScopes, clientOf } from '../client-address.js';
import { maxBodyBytes } from '../body-limit.js';
import { whenGone } from '../connection-gone.js';

/** The bodies a caller without a key may send to the forms (sign-in's, revocations, the token exchange): no more is buffered. */
export const anonymousBodyLimit = 64 * 1024;

export interface AnonymousBodyLimits {
  /** Bodies one client address sends at once (a /64 holds 4 addresses' share, a /48 16). */
  perClient: number;
  /** Bytes of bodies the server holds while receiving them, for forms and for webhooks each. */
  totalBytes: number;
}

/** Enough for a sign-in rush or a CI fleet's token exchanges (a few KiB each), and GitHub's 1 MiB alerts. */
export const defaultAnonymousBodyLimits: AnonymousBodyLimits = { perClient: 8, totalBytes: 32 * 1024 * 1024 };
/** The server bound may not be under the largest body an anonymous route takes (the sidecar's webhook: the server's 3 MiB), which it could then never admit. */
export const minAnonymousBodyBytes = maxBodyBytes;

/** Methods whose bodies fastify never reads (a Content-Length on them costs nothing). */
const bodyless = new Set(['GET', 'HEAD', 'TRACE']);

/** The most a request's body may be, by its headers and its route's limit; 0 when it has none. */
export function bodyBound(method: string, headers: FastifyRequest['headers'], routeLimit: number): number {
  if (bodyless.has(method)) return 0;
  // Node refuses a request that sends both, or a Content-Length that is not a number (400).
  if (headers['transfer-encoding'] !== undefined) return routeLimit;
  const length = Number(headers['content-length'] ?? 0);
  return Math.min(Number.isSafeInteger(length) && length > 0 ? length : 0, routeLimit);
}

export type BodyPool = 'forms' | 'webhooks';
const poolOf = (routeLimit: number): BodyPool => (routeLimit <= anonymousBodyLimit ? 'forms' : 'webhooks');

/** What one request's body has been charged, and how its places come back. */
interface Account {
  pool: BodyPool;
  charged: number;
  /** Given back: what still arrives (a body answered before it was read, 415) is no longer counted. */
  released: boolean;
  release: () => void;
}

const serverFull = () => {
  const err = tooManyRequests('the server is receiving as many request bodies from clients without a key as it allows at once; try again', 1);
  // fastify's body reader answers an error of a stream with its statusCode (400 when it has none).
  return Object.assign(err, { statusCode: 429 });
};

export class AnonymousBodies {
  private readonly byClient: ConcurrentLimit;
  private readonly bytes: Record<BodyPool, number> = { forms: 0, webhooks: 0 };
  /** Each request whose body is being received, by its raw request. */
  private readonly accounts = new WeakMap<object, Account>();

  constructor(
    readonly limits: AnonymousBodyLimits = defaultAnonymousBodyLimits,
    /** Told of each refusal, by which bound refused it (the server's metrics). */
    private readonly refused: (bound: 'address' | BodyPool) => void = () => {},
  ) {
    this.byClient = new ConcurrentLimit(limits.perClient, budgetScopes);
  }

  /** Bytes held now, by pool (the server's metrics). */
  receiving(): Readonly<Record<BodyPool, number>> {
    return this.bytes;
  }

  /** Takes the request's place until its body has arrived or it is gone, or throws 429; a request without a body takes none. */
  admit(req: FastifyRequest, reply: FastifyReply): void {
    const routeLimit = req.routeOptions.bodyLimit ?? 0;
    const bound = bodyBound(req.method, req.headers, routeLimit);
    if (bound === 0) return;
    const client = clientOf(req);
    const full = this.byClient.full(client);
    if (full) {
      this.refused('address');
      throw tooManyRequests(`too many requests from ${scopeWords(full)} are sending a body at once; try again`, 1);
    }
    const pool = poolOf(routeLimit);
    // A declared length that would not fit is refused now; a chunked body is judged as it arrives.
    const declared = req.headers['transfer-encoding'] === undefined ? bound : 0;
    if (this.bytes[pool] + declared > this.limits.totalBytes) {
      this.refused(pool);
      throw serverFull();
    }
    const giveBack = this.byClient.take(client);
    const account: Account = { pool, charged: 0, released: false, release: () => {} };
    account.release = whenGone(req.raw, reply.raw, () => {
      account.released = true;
      this.accounts.delete(req.raw);
      giveBack();
      this.bytes[pool] -= account.charged;
      account.charged = 0;
    });
    this.accounts.set(req.raw, account);
  }

  /** The body as it arrives, each chunk counted against its pool; a chunk past the pool's bound ends it with 429. */
  metered(req: FastifyRequest, payload: Readable): Readable {
    const account = this.accounts.get(req.raw);
    if (!account) return payload;
    const meter = new Transform({
      transform: (chunk: Buffer, _encoding, next) => {
        if (account.released) {
          next(null, chunk);
          return;
        }
        if (this.bytes[account.pool] + chunk.length > this.limits.totalBytes) {
          this.refused(account.pool);
          next(serverFull());
          return;
        }
        this.bytes[account.pool] += chunk.length;
        account.charged += chunk.length;
        next(null, chunk);
      },
    });
    // The request's errors (a cut connection) reach the reader through the meter. pipe, not
    // pipeline: pipeline's bookkeeping cost some 50 µs of CPU per body (review 3).
    payload.on('error', (err) => meter.destroy(err));
    return payload.pipe(meter);
  }

  /** The request's body has arrived whole: its places and bytes come back (a request that took none: nothing). */
  received(req: FastifyRequest): void {
    this.accounts.get(req.raw)?.release();
  }
}
