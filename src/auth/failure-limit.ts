/**
 * A budget of failed authentications per client address (a token bucket): a client that keeps
 * presenting wrong keys is answered 429 with Retry-After, without a store read, until its budget
 * refills. Other clients, and keys that authenticated recently (a CI job behind the same NAT as a
 * broken one), are not held back.
 */

export interface FailureLimitOptions {
  /** Failures a client may make at once before it is refused. */
  burst: number;
  /** Failures per second the budget regains. */
  perSecond: number;
  /** Addresses remembered at most; the memory this costs is bounded by it. */
  maxClients?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class FailureLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxClients: number;
  private readonly now: () => number;

  constructor(private readonly opts: FailureLimitOptions) {
    this.maxClients = opts.maxClients ?? 10_000;
    this.now = opts.now ?? (() => Date.now());
  }

  private refilled(client: string): Bucket | undefined {
    const b = this.buckets.get(client);
    if (!b) return undefined;
    const now = this.now();
    b.tokens = Math.min(this.opts.burst, b.tokens + ((now - b.at) / 1000) * this.opts.perSecond);
    b.at = now;
    if (b.tokens >= this.opts.burst) {
      // A full budget says nothing: forgetting it keeps the map to the clients that misbehave.
      this.buckets.delete(client);
      return undefined;
    }
    return b;
  }

  /** Seconds until the client may try again, or undefined while it has budget left. */
  retryAfter(client: string): number | undefined {
    const b = this.refilled(client);
    if (!b || b.tokens >= 1) return undefined;
    return Math.max(1, Math.ceil((1 - b.tokens) / this.opts.perSecond));
  }

  /**
   * Takes up to one unit of the budget of a client that has failed lately, for an attempt about to
   * be checked: concurrent attempts cannot all pass one look at the budget while their checks are
   * under way. Returns what was taken (0 for a client with a full budget), for settle().
   */
  reserve(client: string): number {
    const b = this.refilled(client);
    if (!b) return 0;
    const taken = Math.min(1, b.tokens);
    b.tokens -= taken;
    return taken;
  }

  /** Ends an attempt reserve() began: a failure costs one unit in all, a success gives back what was taken. */
  settle(client: string, taken: number, failed: boolean): void {
    if (failed) {
      if (taken < 1) this.spend(client, 1 - taken);
      return;
    }
    const b = this.buckets.get(client);
    if (b && taken > 0) b.tokens = Math.min(this.opts.burst, b.tokens + taken);
  }

  /** Spends one unit of the client's budget on a failed attempt. */
  fail(client: string): void {
    this.spend(client, 1);
  }

  private spend(client: string, units: number): void {
    const b = this.refilled(client) ?? { tokens: this.opts.burst, at: this.now() };
    b.tokens = Math.max(0, b.tokens - units);
    // Re-inserting keeps the map in least-recently-failed order, so the oldest goes first.
    this.buckets.delete(client);
    this.buckets.set(client, b);
    if (this.buckets.size > this.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
  }

  get trackedClients(): number {
    return this.buckets.size;
  }
}
