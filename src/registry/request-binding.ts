/**
 * An AccessRequest is bound to the Team it was asked of by that team's uid, which the server keeps
 * in an annotation: a team deleted and created again under the same name is another team, and a
 * request made of the first grants nothing on the second (auth/temporary-access.ts), however long
 * it still runs. Not an ownerReference, as a team key's binding is (team-binding.ts): deleting a team
 * must not collect the record of a break-glass use that still owes its review.
 */
import type { FieldError } from '../api/field-errors.js';
import type { StoredApiObject } from '../api/secrets.js';
import { requestTeamUidAnnotation } from '../api/access-request.js';
import type { RegistryContext } from './context.js';
import { currentBinding, teamOf } from './team-binding.js';

/**
 * Sets the binding on a new request from the live team (a consistent read), and keeps it as it was
 * on every later write: whatever a client wrote in the annotation, it is the server's to set. A
 * request stored before bindings were kept has none and keeps none (temporary-access.ts judges it by
 * creation times).
 */
export function bindRequestToTeam(teams: RegistryContext) {
  return async (_requests: RegistryContext, next: StoredApiObject, old: StoredApiObject | undefined): Promise<FieldError[]> => {
    const errs: FieldError[] = [];
    let uid = old?.metadata.annotations?.[requestTeamUidAnnotation];
    const team = teamOf(next);
    if (!old && typeof team === 'string' && team !== '') {
      const found = await currentBinding(teams, team);
      if (typeof found === 'string') errs.push({ type: 'Invalid', field: 'spec.team', value: team, detail: found });
      else uid = found.uid;
    }
    const { [requestTeamUidAnnotation]: _given, ...others } = next.metadata.annotations ?? {};
    const annotations = uid !== undefined ? { ...others, [requestTeamUidAnnotation]: uid } : others;
    if (Object.keys(annotations).length > 0) next.metadata.annotations = annotations;
    else delete next.metadata.annotations;
    return errs;
  };
}
