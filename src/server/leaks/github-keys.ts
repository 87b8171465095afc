/**
 * GitHub's secret scanning public keys: the ECDSA keys an alert's `Github-Public-Key-Signature`
 * is made with, fetched from `--github-secret-scanning-keys-url` (GitHub's
 * https://api.github.com/meta/public_keys/secret_scanning by default) and cached. A signature with
 * an identifier not in the cache fetches the list again, at most once a minute, so a key GitHub
 * adds is taken up without letting forged identifiers make the server fetch on every request.
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
  private fetching: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The public key GitHub names `id`, if GitHub publishes one. Throws when the list cannot be fetched and none is cached. */
  async keyFor(id: string): Promise<KeyObject | undefined> {
    const age = this.now() - this.fetchedAt;
    if (age > cacheMs || (!this.keys.has(id) && age > refetchMs)) await this.refresh();
    return this.keys.get(id);
  }

  private refresh(): Promise<void> {
    this.fetching ??= this.load().finally(() => (this.fetching = undefined));
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
