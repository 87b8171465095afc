/**
 * A team key is bound to its Team by uid, through an ownerReference the server sets: deleting the
 * team garbage-collects its keys, and a team re-created under the same name (a new uid) gets none
 * of the old ones. A key for a team that does not exist is refused (422).
 */
import type { FieldError } from '../api/field-errors.js';
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject, OwnerReference } from '../api/types.js';
import { keyOf, type RegistryContext } from './context.js';
import { storeCallUnless } from './storage-errors.js';
import { ownerReferencesOf } from '../api/owner-references.js';

/** The team an access key belongs to (spec.team), if any. */
export const teamOf = (obj: KubeObject | undefined) => (obj?.spec as { team?: unknown } | undefined)?.team;

/** The Team reference the server set on a key of `team`, if any. */
export function teamBinding(obj: KubeObject | undefined, team: string): OwnerReference | undefined {
  return ownerReferencesOf(obj?.metadata).find((r) => r.kind === 'Team' && r.name === team);
}

/**
 * Sets (or keeps) the binding of a key to its team; run inside every key write, before admission.
 * A team that does not exist or is being deleted is returned as a field error, which the write
 * throws after admission: only a caller allowed the write learns which it is.
 */
export function bindToTeam(teams: RegistryContext) {
  return async (keys: RegistryContext, next: StoredApiObject, old: StoredApiObject | undefined): Promise<FieldError[]> => {
    const team = teamOf(next);
    const wasTeam = teamOf(old);
    // Whatever a client wrote, Team references of this key are the server's to set.
    const given = ownerReferencesOf(next.metadata).filter((r) => r.kind === 'Team' && (r.name === team || r.name === wasTeam));
    const refs = ownerReferencesOf(next.metadata).filter((r) => !given.includes(r));
    let binding: OwnerReference | undefined;
    const errs: FieldError[] = [];
    if (typeof team === 'string' && team !== '') {
      // An existing key keeps the uid it was bound to; only a new or re-assigned key binds afresh.
      binding = wasTeam === team ? teamBinding(old, team) : undefined;
      if (!binding) {
        const found = await currentBinding(teams, team);
        if (typeof found === 'string') errs.push({ type: 'Invalid', field: 'spec.team', value: team, detail: found });
        else binding = found;
      }
      // The client's flags (blockOwnerDeletion, controller) stay when it names the same uid.
      const same = binding && given.find((r) => r.uid === binding!.uid && r.name === team);
      if (same) binding = { ...same, ...binding! };
    }
    const all = binding ? [...refs, binding] : refs;
    if (all.length > 0) next.metadata.ownerReferences = all;
    else delete next.metadata.ownerReferences;
    return errs;
  };
}

/** The binding to the live team `team`, or why there is none. */
export async function currentBinding(teams: RegistryContext, team: string): Promise<OwnerReference | string> {
  const found = await storeCallUnless(teams, team, 'NotFound', () => teams.store.get<StoredApiObject>(keyOf(teams, team)));
  if (!found) return `team "${team}" does not exist`;
  if (found.metadata.deletionTimestamp) return `team "${team}" is being deleted`;
  return { apiVersion: teams.model.info.apiVersion, kind: 'Team', name: team, uid: found.metadata.uid! };
}
