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
  /**
   * The budgets one client spends, each a key and the number of clients' budgets it holds (its
   * burst and refill are that many times the client's): by default the client's own. An address
   * spends its own and its network's (server/client-address.ts).
   */
  scopes?: (client: string) => readonly BudgetScope[];
}

/** One budget a client spends: its key, and how many clients' budgets it holds. */
export interface BudgetScope {
  key: string;
  share: number;
}

/** Whose budget is spent, as a refusal names it: "this address", or "this address's network (2001:db8::/64)". */
export const scopeWords = (scope: BudgetScope): string => (scope.share === 1 ? 'this address' : `this address's network (${scope.key})`);

/** The default scopes: a client spends its own budget only. */
export const ownBudget = (client: string): readonly BudgetScope[] => [{ key: client, share: 1 }];

/** What reserve() took of each of the client's budgets, for settle(). */
export type Reservation = readonly number[];

/** A reservation of nothing (every budget full): settle() reads a missing entry as 0. */
const nothingTaken: Reservation = [];

interface Bucket {
  tokens: number;
  at: number;
}

export class FailureLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxClients: number;
  private readonly now: () => number;
  private readonly scopes: (client: string) => readonly BudgetScope[];

  constructor(private readonly opts: FailureLimitOptions) {
    this.maxClients = opts.maxClients ?? 10_000;
    this.now = opts.now ?? (() => Date.now());
    this.scopes = opts.scopes ?? ownBudget;
  }

  private refilled(scope: BudgetScope): Bucket | undefined {
    const b = this.buckets.get(scope.key);
    if (!b) return undefined;
    const now = this.now();
    const burst = this.opts.burst * scope.share;
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * this.opts.perSecond * scope.share);
    b.at = now;
    if (b.tokens >= burst) {
      // A full budget says nothing: forgetting it keeps the map to the clients that misbehave.
      this.buckets.delete(scope.key);
      return undefined;
    }
    return b;
  }

  /** Seconds until the client may try again (the longest wait of its budgets), or undefined while each has budget left. */
  retryAfter(client: string): number | undefined {
    // Nobody has failed lately: the common case costs no look at the client's scopes.
    if (this.buckets.size === 0) return undefined;
    let wait: number | undefined;
    for (const scope of this.scopes(client)) {
      const b = this.refilled(scope);
      if (!b || b.tokens >= 1) continue;
      wait = Math.max(wait ?? 0, Math.max(1, Math.ceil((1 - b.tokens) / (this.opts.perSecond * scope.share))));
    }
    return wait;
  }

  /**
   * Takes up to one unit of each budget of a client that has failed lately, for an attempt about to
   * be checked: concurrent attempts cannot all pass one look at the budget while their checks are
   * under way. Returns what was taken of each (0 of a full budget), for settle().
   */
  reserve(client: string): Reservation {
    if (this.buckets.size === 0) return nothingTaken;
    return this.scopes(client).map((scope) => {
      const b = this.refilled(scope);
      if (!b) return 0;
      const taken = Math.min(1, b.tokens);
      b.tokens -= taken;
      return taken;
    });
  }

  /** Ends an attempt reserve() began: a failure costs one unit of each budget in all, a success gives back what was taken. */
  settle(client: string, taken: Reservation, failed: boolean): void {
    if (!failed && taken.every((t) => t === 0)) return;
    for (const [i, scope] of this.scopes(client).entries()) {
      const t = taken[i] ?? 0;
      if (failed) {
        if (t < 1) this.spend(scope, 1 - t);
        continue;
      }
      const b = this.buckets.get(scope.key);
      if (b && t > 0) b.tokens = Math.min(this.opts.burst * scope.share, b.tokens + t);
    }
  }

  /** Spends one unit of each of the client's budgets on a failed attempt. */
  fail(client: string): void {
    for (const scope of this.scopes(client)) this.spend(scope, 1);
  }

  private spend(scope: BudgetScope, units: number): void {
    const b = this.refilled(scope) ?? { tokens: this.opts.burst * scope.share, at: this.now() };
    // Below zero, down to one burst owed: a failure that reserved nothing (it began on a full
    // budget) must still count when a success in flight gives its unit back (a review's trace).
    b.tokens = Math.max(-this.opts.burst * scope.share, b.tokens - units);
    // Re-inserting keeps the map in least-recently-failed order, so the oldest goes first.
    this.buckets.delete(scope.key);
    this.buckets.set(scope.key, b);
    if (this.buckets.size > this.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
  }

  get trackedClients(): number {
    return this.buckets.size;
  }
}
