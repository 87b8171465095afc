/**
 * The one authorization decision, as kube-apiserver's `Authorize(attributes)`: who asks, which verb,
 * on which resource, subresource and name (or which non-resource path). The request path
 * (server/auth/guard.ts), the endpoints outside the resource API (server/auth/endpoint-auth.ts),
 * kubectl's SelfSubjectAccessReview and SelfSubjectRulesReview and the access review (`teamkeys
 * access-review`, src/review) all ask it, so their answers are the request's by construction, not by a test.
 *
 * The order: the key's scope first (it needs no object, so the request path asks it before reading
 * anything), then whether the subresource serves the verb, then the verbs the identity holds on the
 * object, status writes and deletecollection only for holders of the verb everywhere. Each answer
 * carries the grants it rests on (Authorizer.grantsOn), so an access review's "path" is the decision's own.
 * What the write itself reaches (escalation, quota, owners) is admission, in server/auth/guard.ts.
 */
import type { ApiError } from '../api/errors.js';
import type { KubeObject } from '../api/types.js';
import type { Authorizer, Grant } from './authorize.js';
import type { Identity } from './identity.js';
import { nonResourceDecision, type NonResourceAttributes } from './non-resource.js';
import { roleVerbs, type Resource, type Verb } from './roles.js';
import { scopeDenial, scopeNarrows } from './scope.js';

export type { NonResourceAttributes } from './non-resource.js';

/** A request for a resource, as kube's authorizer.Attributes (the API group is the Authorizer's). */
export interface ResourceAttributes {
  user: Identity;
  verb: Verb;
  resource: Resource;
  subresource?: string;
  name?: string;
  /**
   * The object the verb is judged on, already read (a missing one as a stub of its name; a new key
   * by its content); absent for a collection and for a new Team, which is judged without content.
   */
  object?: KubeObject;
}

export type Attributes = ResourceAttributes | NonResourceAttributes;

/**
 * allow; deny when a rule refuses outright (the key's scope, a verb the subresource does not
 * serve); noOpinion when nothing grants it (kube's RBAC answer, which ends as a refusal too).
 * `reason` is what the 403 appends after its colon and what can-i reports as `reason`.
 */
export interface Decision {
  decision: 'allow' | 'deny' | 'noOpinion';
  reason?: string;
  /** The grants that allow it (empty unless allowed). */
  grants: Grant[];
}

/** Subresources a request may name, and the verbs their routes serve (server/routes/resources.ts dispatches on it). */
export const subresources: Record<Resource, Record<string, readonly Verb[]>> = {
  teams: { status: ['get', 'patch', 'update'], accesskeys: ['get'] },
  ownedaccesskeys: { status: ['get', 'patch', 'update'], rotation: ['update'] },
  federatedcredentials: { status: ['get', 'patch', 'update'] },
  // An AccessRequest's status is the server's alone (docs/access-requests.md): a write of it would
  // decide the request without the approval's checks, or lengthen it (a review found a temporary
  // management-admin made its own access last for ever). Approve or deny through `approval`.
  accessrequests: { status: ['get'], approval: ['update'] },
};

/** The verbs a subresource serves; a name the caller chose (`constructor`) serves none. */
export const servedVerbs = (resource: Resource, subresource: string): readonly Verb[] =>
  Object.hasOwn(subresources[resource], subresource) ? subresources[resource][subresource]! : [];

export const allows = (d: Decision): boolean => d.decision === 'allow';

const deny = (reason: string): Decision => ({ decision: 'deny', reason, grants: [] });

/** The scope's refusal, the first step of authorize: it needs no object, so requests ask it before any read. */
export function authorizeScope(authz: Authorizer, a: Omit<ResourceAttributes, 'object'>): Decision | undefined {
  const denials = scopeRequests(a.resource, a.verb, a.subresource).map(([verb, sub]) =>
    scopeDenial(a.user.scope, { verb, group: authz.group, resource: a.resource, ...(a.name ? { name: a.name } : {}), ...(sub ? { subresource: sub } : {}) }),
  );
  const why = denials.every((d) => d !== undefined) ? denials[0] : undefined;
  return why ? deny(why) : undefined;
}

/**
 * The scope requests that allow what is asked: a POST to the rotation subresource is an update of
 * the key, allowed by a scope that allows `update` of ownedaccesskeys/rotation, or `update` or
 * `patch` of the key itself (server/routes/resources.ts, rotation).
 */
const scopeRequests = (resource: Resource, verb: Verb, subresource: string | undefined): [Verb, string?][] =>
  resource === 'ownedaccesskeys' && subresource === 'rotation' && verb === 'update' ? [['update', 'rotation'], ['update'], ['patch']] : [[verb, subresource]];

/** The decision for each of `verbs` with the same attributes: the grants on the object are read once. */
export function authorizeVerbs(authz: Authorizer, a: Omit<ResourceAttributes, 'verb'>, verbs: readonly Verb[]): (Decision & { verb: Verb })[] {
  const held = authz.explain(a.user, a.resource, a.object, a.subresource);
  // A scope that narrows nothing refuses no verb (scopeDenial's first step): asked once, not per
  // verb, since an access review asks this for every identity it lists.
  const scoped = scopeNarrows(a.user.scope);
  return verbs.map((verb) => ({ verb, ...((scoped ? authorizeScope(authz, { ...a, verb }) : undefined) ?? objectStep(a, verb, held)) }));
}

/**
 * The steps after the scope, for a request whose scope was asked before its object was read (and,
 * for a rotation, for the update it is judged as: server/routes/resources.ts).
 */
export function authorizeObject(authz: Authorizer, a: ResourceAttributes): Decision {
  return objectStep(a, a.verb, authz.explain(a.user, a.resource, a.object, a.subresource));
}

function objectStep(a: Omit<ResourceAttributes, 'verb'>, verb: Verb, held: { verbs: readonly Verb[]; grant: Grant }[]): Decision {
  const { resource, subresource } = a;
  if (subresource && !servedVerbs(resource, subresource).includes(verb)) return deny(`${resource}/${subresource} does not serve ${verb}`);
  const grants = held.filter((h) => h.verbs.includes(verb)).map((h) => h.grant);
  // Status is written by the server itself; through the API only by holders of the verb everywhere.
  if ((subresource === 'status' && verb !== 'get') || verb === 'deletecollection') {
    return roleVerbs(a.user.clusterRoles, resource).has(verb) ? { decision: 'allow', grants: grants.filter((g) => g.kind === 'role') } : { decision: 'noOpinion', grants: [] };
  }
  return grants.length > 0 ? { decision: 'allow', grants } : { decision: 'noOpinion', grants: [] };
}

const isResourceRequest = (a: Attributes): a is ResourceAttributes => 'resource' in a;

/** Whether `a.user` may make the request, and why not. */
export function authorize(authz: Authorizer, a: Attributes): Decision {
  if (!isResourceRequest(a)) return nonResourceDecision(authz.group, a);
  return authorizeScope(authz, a) ?? authorizeObject(authz, a);
}

/** The 403 for a refused resource request, in kube-apiserver's words, its reason after the colon. */
export function forbiddenBy(authz: Authorizer, a: Omit<ResourceAttributes, 'object'>, d: Pick<Decision, 'reason'>): ApiError {
  return authz.forbidden(a.user, a.verb, a.resource, a.name, a.subresource, d.reason);
}
