/**
 * How many watches may be open, and for how long each lasts. Each watch holds a connection, a queue
 * of up to 10,000 events, a share of every write's fan-out and a check of its key every half second.
 */
import { tooManyRequests } from '../../api/errors.js';
import type { Identity } from '../../auth/identity.js';

/** The most watches one access key may hold open at once; one more is 429. */
export const defaultMaxWatchesPerKey = 100;
/** The most watches one user (or team, or subject: every key acting for it) may hold open at once. */
export const defaultMaxWatchesPerUser = 250;
/** The most watches the server holds open at once, for everyone together. */
export const defaultMaxWatches = 5_000;
/** kube-apiserver's --min-request-timeout default: watches end after 30 to 60 minutes, and clients reconnect. */
export const defaultMinRequestTimeoutSeconds = 1800;
/** How long a watch that has ended waits for its client to take what was written before it closes the connection. */
export const defaultEndGraceMs = 5000;

export interface WatchLimits {
  maxPerKey: number;
  maxPerUser: number;
  maxTotal: number;
  minRequestTimeoutSeconds: number;
  /** How long an ended watch waits for its client to read what was written (a client that stopped reading is cut off). */
  endGraceMs: number;
}

export const defaultWatchLimits: WatchLimits = {
  maxPerKey: defaultMaxWatchesPerKey,
  maxPerUser: defaultMaxWatchesPerUser,
  maxTotal: defaultMaxWatches,
  minRequestTimeoutSeconds: defaultMinRequestTimeoutSeconds,
  endGraceMs: defaultEndGraceMs,
};

/**
 * How long a watch lasts: kube-apiserver's jitter (a random time in [min, 2*min) of
 * --min-request-timeout, so reconnects spread out), and no longer than `timeoutSeconds` when the
 * client asks for less. kube uses a non-zero timeoutSeconds as given, without bound; here it is capped.
 * 0 or absent means not asked, as in kube.
 */
export function watchDurationMs(timeoutSeconds: number | undefined, minRequestTimeoutSeconds: number, random: () => number = Math.random): number {
  const jittered = minRequestTimeoutSeconds * 1000 * (random() + 1);
  return timeoutSeconds ? Math.min(timeoutSeconds * 1000, jittered) : jittered;
}

/** Counts open watches per key, per user and in total; `take` refuses the one over a limit with a 429. */
export class WatchSlots {
  private readonly perKey = new Map<string, number>();
  private readonly perUser = new Map<string, number>();
  private total = 0;

  constructor(readonly limits: WatchLimits) {}

  /** Takes a place for a watch of `who`; the returned function gives it back (once). */
  take(who: Identity): () => void {
    const { maxPerKey, maxPerUser, maxTotal } = this.limits;
    if ((this.perKey.get(who.keyName) ?? 0) >= maxPerKey) {
      throw tooManyRequests(`too many watches open for this access key (the limit is ${maxPerKey}); close one or retry later`, 1);
    }
    if ((this.perUser.get(who.name) ?? 0) >= maxPerUser) {
      throw tooManyRequests(`too many watches open for ${who.name} (the limit is ${maxPerUser}, over all its access keys); close one or retry later`, 1);
    }
    if (this.total >= maxTotal) throw tooManyRequests(`too many watches open on this server (the limit is ${maxTotal}); retry later`, 1);
    add(this.perKey, who.keyName, 1);
    add(this.perUser, who.name, 1);
    this.total++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      add(this.perKey, who.keyName, -1);
      add(this.perUser, who.name, -1);
      this.total--;
    };
  }
}

/** Adds to a count; a name leaves the map when its count is back to 0. */
function add(counts: Map<string, number>, name: string, n: number): void {
  const next = (counts.get(name) ?? 0) + n;
  if (next > 0) counts.set(name, next);
  else counts.delete(name);
}
