/**
 * How many access keys one identity (a user, a team, a subject: whom a key acts for) may have.
 * Beyond it a create, or a move of a key to that identity, is 403 Forbidden `exceeded quota`, as
 * kube's ResourceQuota answers: a count that only a delete lowers is not a 429, which clients
 * (client-go, kubectl) retry by themselves. The count reads the watch cache's holder index, so it
 * costs the holder's keys, not the fleet's.
 *
 * Exact on one server: a write admitted for a holder holds a place (a reservation) until the write
 * has settled, and a later write for the same holder counts the places held before its own beside
 * the stored keys. Without them, the creates of a burst in parallel read the same count and passed
 * at the last free place (19 of 20 in one measured burst: test/server/key-quota-burst.test.ts).
 * Places are counted by uid (a create keeps its uid when a taken generated name is retried); a
 * place whose write was refused counts no more, one whose write failed after admission (it may
 * have committed) still counts for the writes that read it while held; a write refused while an
 * earlier one still held the last place, which then failed, was refused at the very edge (never a
 * key past the bound).
 * Servers sharing one database still each count their own: across replicas the bound is per
 * replica's burst, not exact.
 */
import type { KubeObject, OwnedAccessKeySpec } from '../api/types.js';
import { subjectOf } from '../auth/identity.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { AdmissionRequest } from './admission/chain.js';

/** The default of `teamkeys serve --max-keys-per-user`. */
export const defaultMaxKeysPerUser = 100;

/** Whom a key acts for, as 403 messages and the quota name it. */
export const keyHolder = (key: KubeObject): string => subjectOf((key.spec ?? {}) as OwnedAccessKeySpec).name;

/** A key being written for an identity: counted from its admission until its write has settled. */
interface Place {
  /** The key's uid (a create sets it before admission and keeps it when a taken name is retried). */
  uid: string;
  /** The key the write replaces (a re-login's previous Login key): the two count once. */
  replaces?: string;
  /**
   * Held (in flight); stored (the write settled and may have committed: it succeeded, or failed
   * after admission); or failed (refused by admission: nothing was written).
   */
  state: 'held' | 'stored' | 'failed';
}

/** A place held for a key being written; `release` (the first call counts) gives it back once the write has settled. */
export interface QuotaPlace {
  /** The places held for the same identity when this one was taken: the only ones it counts. */
  readonly before: readonly Place[];
  release(failed: boolean): void;
}

export interface KeyQuota {
  max: number;
  /** Holds a place for the key `uid` of `holder` until released. */
  reserve(holder: string, uid: string, replaces?: string): QuotaPlace;
  /** The places held for `holder` now. */
  held(holder: string): Place[];
  /**
   * How many keys act for `holder` (keyHolder), other than the key being written (`self`, a uid:
   * neither its own earlier place nor the key itself, which a move in parallel may have stored
   * here already) and the keys `except` (names): those stored, and those of `writing` (the places
   * the caller read) not refused, each once by uid; a place that replaces a stored key stands for it.
   */
  count(holder: string, except: readonly string[], writing: readonly Place[], self: string): Promise<{ stored: number; writing: number }>;
}

export function keyQuota(keys: Pick<ResourceRegistry, 'byField'>, max = defaultMaxKeysPerUser): KeyQuota {
  /** Holder -> the places held for it: only writes in flight, so it stays small. */
  const places = new Map<string, Set<Place>>();
  const held = (holder: string) => [...(places.get(holder) ?? [])];
  return {
    max,
    held,
    reserve(holder, uid, replaces) {
      // Read before this place is added: a write counts the places taken before its own, never
      // after (two writes counting each other's would both be refused with a place free).
      const before = held(holder);
      let mine = places.get(holder);
      if (!mine) places.set(holder, (mine = new Set()));
      const place: Place = { uid, ...(replaces ? { replaces } : {}), state: 'held' };
      mine.add(place);
      const all = mine;
      return {
        before,
        release: (failed) => {
          if (!all.delete(place)) return;
          place.state = failed ? 'failed' : 'stored';
          if (all.size === 0 && places.get(holder) === all) places.delete(holder);
        },
      };
    },
    async count(holder, except, writing, self) {
      // The places were read by the caller before the stored keys are: a write that settles (and
      // gives its place back) while the index is read is counted one way or the other, as the
      // stored key or as its place, and by uid never both.
      // The holder index (registry/indexes.ts) holds exactly keyHolder's value: no walk of every key.
      const stored = (await keys.byField('holder', holder)).filter((k) => !except.includes(k.metadata.name!) && k.metadata.uid !== self);
      const counted = writing.filter((p) => p.state !== 'failed' && p.uid !== self);
      const replaced = new Set(counted.flatMap((p) => (p.replaces ? [p.replaces] : [])));
      const kept = stored.filter((k) => !replaced.has(k.metadata.name!));
      const uids = new Set(kept.map((k) => k.metadata.uid));
      return { stored: kept.length, writing: new Set(counted.filter((p) => !uids.has(p.uid)).map((p) => p.uid)).size };
    },
  };
}

/**
 * Why a key write would pass the quota of the identity it acts for (a 403 reason), or undefined.
 * `replaces`: a key the write replaces (a re-login's previous Login key), not counted. `hold`: where
 * the write keeps the place it is admitted to until it has settled (admission/chain.ts, Holds);
 * without it, nothing is held (the count alone).
 */
export async function quotaDenial(
  quota: KeyQuota | undefined,
  old: KubeObject | undefined,
  next: KubeObject,
  replaces?: string,
  hold?: AdmissionRequest['hold'],
): Promise<string | undefined> {
  if (!quota) return undefined;
  const holder = keyHolder(next);
  if (old && keyHolder(old) === holder) return undefined;
  // The write's own name is not left out of the stored keys: a key of this holder stored under it
  // (a generated name that collided, which the create then retries under another) is one of its
  // keys. The key itself is left out, by uid: a move of it in parallel may have stored it here already.
  const uid = next.metadata.uid || `name:${next.metadata.name}`;
  // Held before the count, and handed to the write at once: a count that fails gives it back too.
  const mine = hold ? quota.reserve(holder, uid, replaces) : undefined;
  if (mine) hold!(mine.release);
  // Without a place of its own, a write counts every place held now.
  const { stored, writing } = await quota.count(holder, replaces ? [replaces] : [], mine ? mine.before : quota.held(holder), uid);
  if (stored + writing < quota.max) return undefined;
  mine?.release(true);
  const more = writing > 0 ? ` and ${writing} more being written` : '';
  return `exceeded quota: "${holder}" already has ${stored} access keys${more}, the most allowed (--max-keys-per-user ${quota.max})`;
}
