/**
 * Sign-ins under way, in this process's memory: each entry is taken at most once and lapses on its
 * own. A login started at the server (state sent to the provider) waits for the provider's callback;
 * a finished one waits, under a one-time code, for the CLI to exchange it with its PKCE verifier.
 * Kept in memory on purpose: nothing here outlives a few minutes, and refresh tokens not yet bound
 * to a key never reach the store. Behind a load balancer, sign-in needs sticky sessions (docs/sso.md).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random token for state, nonce and one-time codes: 256 bits, base64url. */
export const randomToken = (): string => randomBytes(32).toString('base64url');

/** RFC 7636 S256: the challenge of a verifier. */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

/** Whether `verifier` is the one `challenge` was made from (compared in constant time). */
export function verifierMatches(verifier: unknown, challenge: string): boolean {
  if (typeof verifier !== 'string' || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const a = Buffer.from(s256(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Entries that expire: at most `max` at once (the oldest go first), each taken once. */
export class Expiring<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  put(id: string, value: T): void {
    this.sweep();
    // Put again, an entry moves to the end: the map's order stays the order entries lapse in.
    this.entries.delete(id);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(id, { value, until: this.now() + this.ttlMs });
  }

  /** How many entries are held (lapsed ones go at the next put). */
  get size(): number {
    return this.entries.size;
  }

  /** The entry, removed: a second take of the same id finds nothing. */
  take(id: unknown): T | undefined {
    if (typeof id !== 'string') return undefined;
    const entry = this.entries.get(id);
    this.entries.delete(id);
    return entry && entry.until >= this.now() ? entry.value : undefined;
  }

  /** The entry, left in place (a device sign-in polled until it finishes). */
  peek(id: unknown): T | undefined {
    if (typeof id !== 'string') return undefined;
    const entry = this.entries.get(id);
    return entry && entry.until >= this.now() ? entry.value : undefined;
  }

  /**
   * Drops the lapsed entries. Every entry lives `ttlMs` from its put, so the map's order (of puts)
   * is the order they lapse in: the sweep stops at the first one still live, where it walked all
   * 10,000 on every put (found by a review).
   */
  private sweep(): void {
    const now = this.now();
    for (const [id, e] of this.entries) {
      if (e.until >= now) return;
      this.entries.delete(id);
    }
  }
}
