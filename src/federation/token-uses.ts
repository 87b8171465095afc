/**
 * Each job token is exchanged once: its issuer and jti, hashed, are written to the store (the one
 * every replica shares) as the exchange succeeds, and a second write of the same key fails there,
 * on whichever replica tries it. A record is kept an hour past its token's expiry, then collected by
 * `collect` (the leader's). Each replica judges expiry by its own clock, with the exchange's 60 s
 * of leeway: kept only that long, the record of a token used once was gone by the leader's clock
 * while a replica whose clock lagged by more still took the token as live, and exchanged it again
 * (a review found it). An hour of lag is tolerated; a record is a hash and a number.
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

/** How long past its token's expiry a record is kept: the clock lag between replicas it covers. */
export const useRecordRetentionMs = 3_600_000;

/** A token's record: its issuer and jti, hashed. */
const recordName = (issuer: string, jti: string) => createHash('sha256').update(`${issuer}\0${jti}`).digest('hex');

export class TokenUses {
  constructor(private readonly store: Store) {}

  /** Records the token's use; false if it was used already (here or on another replica). */
  async claim(issuer: string, jti: string, expiresAtMs: number): Promise<boolean> {
    const name = recordName(issuer, jti);
    try {
      await this.store.create<TokenUse>(`${tokenUsesPrefix}${name}`, { metadata: { name }, expiresAt: expiresAtMs });
      return true;
    } catch (err) {
      if (isStorageError(err, 'KeyExists')) return false;
      throw err;
    }
  }

  /**
   * Forgets the token's use: its mint was refused (a quota, a policy), so nothing was minted and the
   * job may try again with the same token once the cause is gone (found by a review: a refused mint
   * spent the token). Never after a mint that may have stored a key.
   */
  async release(issuer: string, jti: string): Promise<void> {
    await this.store.delete(`${tokenUsesPrefix}${recordName(issuer, jti)}`).catch(() => undefined);
  }

  /** Deletes the records of tokens expired more than useRecordRetentionMs before `now` (epoch ms); returns how many went. */
  async collect(now: number): Promise<number> {
    let removed = 0;
    for await (const use of this.store.scan<TokenUse>(tokenUsesPrefix, () => true)) {
      if (use.expiresAt + useRecordRetentionMs >= now) continue;
      await this.store.delete(`${tokenUsesPrefix}${use.metadata.name}`, { resourceVersion: use.metadata.resourceVersion! }).then(
        () => removed++,
        () => undefined,
      );
    }
    return removed;
  }
}
