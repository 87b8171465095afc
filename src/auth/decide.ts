/**
 * The request path's decision for a verb on an object, as the access reviews (can-i, the
 * SelfSubjectAccessReview, and `teamkeys access-review`) reproduce it: the key's scope first, then
 * the verbs the identity holds on the object, status writes and deletecollection only for holders
 * of the verb everywhere. Each answer carries the grants it rests on (Authorizer.grantsOn), so a
 * review's "path" is the decision's own, not a second reading of the rules.
 */
import type { KubeObject } from '../api/types.js';
import type { Authorizer, Grant } from './authorize.js';
import type { Identity } from './identity.js';
import { roleVerbs, type Resource, type Verb } from './roles.js';
import { scopeDenial } from './scope.js';

/** Subresources a request may name, and the verbs their routes serve. */
export const subresources: Record<Resource, Record<string, readonly Verb[]>> = {
  teams: { status: ['get', 'patch', 'update'], accesskeys: ['get'] },
  ownedaccesskeys: { status: ['get', 'patch', 'update'], rotation: ['update'] },
};

/**
 * The scope requests the route accepts for one asked: a POST to the rotation subresource is an
 * update of the key, allowed by a scope that allows `update` of ownedaccesskeys/rotation, or
 * `update` or `patch` of the key itself (server/routes/resources.ts, rotation).
 */
const scopeRequests = (resource: Resource, verb: Verb, subresource: string | undefined): [Verb, string?][] =>
  resource === 'ownedaccesskeys' && subresource === 'rotation' && verb === 'update' ? [['update', 'rotation'], ['update'], ['patch']] : [[verb, subresource]];

/** The verbs a subresource serves; a name the review chose (`constructor`) serves none. */
export const servedVerbs = (resource: Resource, subresource: string): readonly Verb[] =>
  Object.hasOwn(subresources[resource], subresource) ? subresources[resource][subresource]! : [];

export interface Decision {
  verb: Verb;
  allowed: boolean;
  /** Why not, when the scope or the route says so (kube's SubjectAccessReview reason). */
  reason?: string;
  /** The grants that allow it (empty when refused). */
  grants: Grant[];
}

/** What is asked besides verb and resource: the object's name and a subresource. */
export interface Target {
  name?: string;
  subresource?: string;
}

/** The decision for each of `verbs` on `obj` (already read; undefined for none, or a create of a team). */
export function decide(authz: Authorizer, who: Identity, resource: Resource, obj: KubeObject | undefined, verbs: readonly Verb[], q: Target = {}): Decision[] {
  const held = authz.explain(who, resource, obj, q.subresource);
  const roles = roleVerbs(who.clusterRoles, resource);
  return verbs.map((verb) => {
    const denials = scopeRequests(resource, verb, q.subresource).map(([v, sub]) => scopeDenial(who.scope, { verb: v, group: authz.group, resource, ...(q.name ? { name: q.name } : {}), ...(sub ? { subresource: sub } : {}) }));
    const why = denials.every((d) => d !== undefined) ? denials[0] : undefined;
    if (why) return { verb, allowed: false, reason: why, grants: [] };
    if (q.subresource && !servedVerbs(resource, q.subresource).includes(verb)) return { verb, allowed: false, reason: `${resource}/${q.subresource} does not serve ${verb}`, grants: [] };
    const grants = held.filter((h) => h.verbs.includes(verb)).map((h) => h.grant);
    // Status is written by the server itself; through the API only by holders of the verb everywhere.
    if ((q.subresource === 'status' && verb !== 'get') || verb === 'deletecollection') {
      return { verb, allowed: roles.has(verb), grants: roles.has(verb) ? grants.filter((g) => g.kind === 'role') : [] };
    }
    return { verb, allowed: grants.length > 0, grants };
  });
}
