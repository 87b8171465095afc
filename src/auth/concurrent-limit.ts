/**
 * What an anonymous client may hold at once (device sign-ins waiting for approval, alert bodies
 * being read before their signature is checked), counted per budget scope as the failure budgets
 * are (failure-limit.ts): its address, and for IPv6 its /64 and /48 too, each holding several
 * addresses' share (server/client-address.ts). Counted by the address alone, one host with a /64
 * held a place for each address it picked (found by a review of the alert route).
 */
import { ownBudget, type BudgetScope } from './failure-limit.js';

export class ConcurrentLimit {
  /** Places held per scope key; a key leaves at zero, so this holds at most a few keys per place held. */
  private readonly held = new Map<string, number>();

  constructor(
    /** Places one address may hold; a network holds its share's multiple. */
    readonly perClient: number,
    private readonly scopes: (client: string) => readonly BudgetScope[] = ownBudget,
  ) {}

  /** The first scope of `client` that holds all its places, if any (share 1: the address itself). */
  full(client: string): BudgetScope | undefined {
    return this.scopes(client).find((s) => (this.held.get(s.key) ?? 0) >= this.perClient * s.share);
  }

  /** Takes a place in every scope of `client` (the caller asked `full` first); the function given back returns them, once. */
  take(client: string): () => void {
    const keys = this.scopes(client).map((s) => s.key);
    for (const key of keys) this.held.set(key, (this.held.get(key) ?? 0) + 1);
    let returned = false;
    return () => {
      if (returned) return;
      returned = true;
      for (const key of keys) {
        const left = (this.held.get(key) ?? 1) - 1;
        if (left > 0) this.held.set(key, left);
        else this.held.delete(key);
      }
    };
  }
}
