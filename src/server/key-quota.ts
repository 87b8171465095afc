/**
 * How many access keys one identity (a user, a team, a subject: whom a key acts for) may have.
 * Beyond it a create, or a move of a key to that identity, is 403 Forbidden `exceeded quota`, as
 * kube's ResourceQuota answers: a count that only a delete lowers is not a 429, which clients
 * (client-go, kubectl) retry by themselves. The count is of stored keys, read at admission: two
 * creates at the same moment may both pass at the last free place (a bound, not an exact quota).
 * The count reads the watch cache's holder index, so it costs the holder's keys, not the fleet's.
 */
import type { KubeObject, OwnedAccessKeySpec } from '../api/types.js';
import { subjectOf } from '../auth/identity.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';

/** The default of `teamkeys serve --max-keys-per-user`. */
export const defaultMaxKeysPerUser = 100;

/** Whom a key acts for, as 403 messages and the quota name it. */
export const keyHolder = (key: KubeObject): string => subjectOf((key.spec ?? {}) as OwnedAccessKeySpec).name;

export interface KeyQuota {
  max: number;
  /** How many stored keys act for the identity `holder` (keyHolder), other than the keys `except`. */
  count(holder: string, except: readonly string[]): Promise<number>;
}

export function keyQuota(keys: ResourceRegistry, max = defaultMaxKeysPerUser): KeyQuota {
  return {
    max,
    async count(holder, except) {
      // The holder index (registry/indexes.ts) holds exactly keyHolder's value: no walk of every key.
      return (await keys.byField('holder', holder)).filter((k) => !except.includes(k.metadata.name!)).length;
    },
  };
}

/**
 * Why a key write would pass the quota of the identity it acts for (a 403 reason), or undefined.
 * `replaces`: a key the write replaces (a re-login's previous Login key), not counted.
 */
export async function quotaDenial(quota: KeyQuota | undefined, old: KubeObject | undefined, next: KubeObject, replaces?: string): Promise<string | undefined> {
  if (!quota) return undefined;
  const holder = keyHolder(next);
  if (old && keyHolder(old) === holder) return undefined;
  const have = await quota.count(holder, [next.metadata.name!, ...(replaces ? [replaces] : [])]);
  if (have < quota.max) return undefined;
  return `exceeded quota: "${holder}" already has ${have} access keys, the most allowed (--max-keys-per-user ${quota.max})`;
}
