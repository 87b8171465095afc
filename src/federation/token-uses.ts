/**
 * Each job token is exchanged once: its issuer and jti, hashed, are written to the store (the one
 * every replica shares) as the exchange succeeds, and a second write of the same key fails there,
 * on whichever replica tries it. A record is kept until its token has expired (no exchange could use
 * the token after that anyway), then collected by `collect`.
 */
import { createHash } from 'node:crypto';
import { isStorageError } from '../store/errors.js';
import type { Store } from '../store/types.js';

/** Where the records live: outside every kind's prefix, so no list, watch or informer of a kind sees them. */
export const tokenUsesPrefix = '/federatedtokenuses/';

interface TokenUse {
  metadata: { name: string; resourceVersion?: string };
  /** When the token expires (epoch ms): the record may go after it. */
  expiresAt: number;
}

export class TokenUses {
  constructor(private readonly store: Store) {}

  /** Records the token's use; false if it was used already (here or on another replica). */
  async claim(issuer: string, jti: string, expiresAtMs: number): Promise<boolean> {
    const name = createHash('sha256').update(`${issuer}\0${jti}`).digest('hex');
    try {
      await this.store.create<TokenUse>(`${tokenUsesPrefix}${name}`, { metadata: { name }, expiresAt: expiresAtMs });
      return true;
    } catch (err) {
      if (isStorageError(err, 'KeyExists')) return false;
      throw err;
    }
  }

  /** Deletes the records of tokens expired before `now` (epoch ms); returns how many went. */
  async collect(now: number, skewMs: number): Promise<number> {
    let removed = 0;
    for await (const use of this.store.scan<TokenUse>(tokenUsesPrefix, () => true)) {
      if (use.expiresAt + skewMs >= now) continue;
      await this.store.delete(`${tokenUsesPrefix}${use.metadata.name}`, { resourceVersion: use.metadata.resourceVersion! }).then(
        () => removed++,
        () => undefined,
      );
    }
    return removed;
  }
}
