/**
 * A team key is bound to its Team by uid, through an ownerReference the server sets: deleting the
 * team garbage-collects its keys, and a team re-created under the same name (a new uid) gets none
 * of the old ones. A key for a team that does not exist is refused (422).
 */
import { invalid } from '../api/errors.js';
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject, OwnerReference } from '../api/types.js';
import { keyOf, type RegistryContext } from './context.js';
import { storeCallUnless } from './storage-errors.js';

/** The team an access key belongs to (spec.team), if any. */
export const teamOf = (obj: KubeObject | undefined) => (obj?.spec as { team?: unknown } | undefined)?.team;

/** The Team reference the server set on a key of `team`, if any. */
export function teamBinding(obj: KubeObject | undefined, team: string): OwnerReference | undefined {
  return (obj?.metadata.ownerReferences ?? []).find((r) => r.kind === 'Team' && r.name === team);
}

/** Sets (or keeps) the binding of a key to its team; run inside every key write, before admission. */
export function bindToTeam(teams: RegistryContext) {
  return async (keys: RegistryContext, next: StoredApiObject, old: StoredApiObject | undefined): Promise<void> => {
    const team = teamOf(next);
    const wasTeam = teamOf(old);
    // Whatever a client wrote, Team references of this key are the server's to set.
    const given = (next.metadata.ownerReferences ?? []).filter((r) => r.kind === 'Team' && (r.name === team || r.name === wasTeam));
    const refs = (next.metadata.ownerReferences ?? []).filter((r) => !given.includes(r));
    let binding: OwnerReference | undefined;
    if (typeof team === 'string' && team !== '') {
      // An existing key keeps the uid it was bound to; only a new or re-assigned key binds afresh.
      binding = wasTeam === team ? teamBinding(old, team) : undefined;
      if (!binding) binding = await currentBinding(teams, keys, next, team);
      // The client's flags (blockOwnerDeletion, controller) stay when it names the same uid.
      const same = given.find((r) => r.uid === binding!.uid && r.name === team);
      if (same) binding = { ...same, ...binding };
    }
    const all = binding ? [...refs, binding] : refs;
    if (all.length > 0) next.metadata.ownerReferences = all;
    else delete next.metadata.ownerReferences;
  };
}

async function currentBinding(teams: RegistryContext, keys: RegistryContext, next: StoredApiObject, team: string): Promise<OwnerReference> {
  const found = await storeCallUnless(teams, team, 'NotFound', () => teams.store.get<StoredApiObject>(keyOf(teams, team)));
  if (!found || found.metadata.deletionTimestamp) {
    throw invalid(keys.gk, next.metadata.name ?? '', [
      { type: 'Invalid', field: 'spec.team', value: team, detail: found ? `team "${team}" is being deleted` : `team "${team}" does not exist` },
    ]);
  }
  return { apiVersion: teams.model.info.apiVersion, kind: 'Team', name: team, uid: found.metadata.uid! };
}
