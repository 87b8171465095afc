/**
 * GitHub's secret scanning public keys: the ECDSA keys an alert's `Github-Public-Key-Signature`
 * is made with, fetched from `--github-secret-scanning-keys-url` (GitHub's
 * https://api.github.com/meta/public_keys/secret_scanning by default) and cached. A signature with
 * an identifier not in the cache fetches the list again, at most once a minute, so a key GitHub
 * adds is taken up without letting forged identifiers, or GitHub being out of reach, make the
 * server fetch on every request.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';

export const defaultGitHubKeysUrl = 'https://api.github.com/meta/public_keys/secret_scanning';
/** How long a fetched list is used before it is fetched again. */
const cacheMs = 60 * 60_000;
/** The least time between two fetches (an unknown identifier does not fetch more often). */
const refetchMs = 60_000;
const fetchTimeoutMs = 10_000;

interface PublishedKey {
  key_identifier?: unknown;
  key?: unknown;
}

export class GitHubKeys {
  private keys = new Map<string, KeyObject>();
  private fetchedAt = -Infinity;
  /** The last fetch begun, whether it worked or not: fetches are at most once a minute either way. */
  private attemptedAt = -Infinity;
  private lastFailure: Error | undefined;
  private fetching: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The public key GitHub names `id`, if GitHub publishes one. A list older than an hour, or one
   * without `id`, is fetched again, at most once a minute whether or not the fetches work: while
   * GitHub's list cannot be fetched, requests do not each make the server fetch (a review found 30
   * requests making 30 fetches). When a fetch fails, the list fetched before keeps verifying; this
   * throws only when no list was ever fetched.
   */
  async keyFor(id: string): Promise<KeyObject | undefined> {
    const now = this.now();
    const due = now - this.fetchedAt > cacheMs || !this.keys.has(id);
    if (this.fetching || (due && now - this.attemptedAt >= refetchMs)) {
      try {
        await this.refresh();
      } catch (err) {
        if (this.keys.size === 0) throw err;
      }
    } else if (this.keys.size === 0 && this.lastFailure) throw this.lastFailure;
    return this.keys.get(id);
  }

  private refresh(): Promise<void> {
    if (!this.fetching) {
      this.attemptedAt = this.now();
      this.fetching = this.load()
        .then(
          () => void (this.lastFailure = undefined),
          (err: unknown) => {
            this.lastFailure = err instanceof Error ? err : new Error(String(err));
            throw this.lastFailure;
          },
        )
        .finally(() => (this.fetching = undefined));
    }
    return this.fetching;
  }

  private async load(): Promise<void> {
    const res = await fetch(this.url, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(fetchTimeoutMs) });
    if (!res.ok) throw new Error(`GitHub's secret scanning keys (${this.url}) answered ${res.status}`);
    const body = (await res.json()) as { public_keys?: PublishedKey[] };
    const keys = new Map<string, KeyObject>();
    for (const k of body.public_keys ?? []) {
      if (typeof k.key_identifier !== 'string' || typeof k.key !== 'string') continue;
      try {
        keys.set(k.key_identifier, createPublicKey(k.key));
      } catch {
        // A key this runtime cannot read verifies nothing; the others still do.
      }
    }
    this.keys = keys;
    this.fetchedAt = this.now();
  }
}

/** Whether `signature` (base64 DER, as GitHub sends it) is an ECDSA-SHA256 signature of `body` by `key`. */
export function verifiesBody(key: KeyObject, body: Buffer, signature: string): boolean {
  try {
    return verify('sha256', body, { key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}
