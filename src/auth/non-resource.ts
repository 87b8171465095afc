/**
 * Requests outside the resource API, as kube's nonResourceURLs: discovery, open to every key, and
 * the endpoints the sidecar mounts on the API listener (/metrics, /sync/report, POST /sync), each
 * allowed as roles on the whole API that the key's scope allows too. decision.ts's authorize()
 * answers for them; the endpoints and SelfSubjectAccessReview both ask it.
 */
import { servedPlurals } from '../api/resources.js';
import type { Decision } from './decision.js';
import type { Identity } from './identity.js';
import { roleVerbs, type Resource, type Verb } from './roles.js';
import { scopeDenial } from './scope.js';

/** A request for a path, as kube's non-resource attributes: the verb is the HTTP method, lower-case. */
export interface NonResourceAttributes {
  user: Identity;
  verb: string;
  path: string;
}

/** Discovery and the OpenAPI document: every authenticated caller may read them, as in Kubernetes. */
export const discoveryPaths = /^\/(api|apis|openapi|version)(\/|$)/;

/** The discovery paths as a rules review lists them (kube's nonResourceURLs, `*` ending a prefix). */
const discoveryURLs = ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', '/version'];

/** The sidecar's endpoints on the API listener, by what they do. */
export const endpointPaths = {
  metrics: { verb: 'get', path: '/metrics' },
  report: { verb: 'get', path: '/sync/report' },
  sync: { verb: 'post', path: '/sync' },
} as const;

export type EndpointAction = keyof typeof endpointPaths;

/**
 * Who may do each, as roles on the whole API (the key's scope must allow the same):
 * - metrics: get on every team or every access key (teams-viewer, teams-admin, accesskeys-admin,
 *   management-admin), as kube's /metrics needs a user allowed to read it;
 * - report (field diffs and who made them, of both kinds): get on every team and every access key;
 * - sync (run a reconcile now, outside a signed webhook): management-admin.
 */
const needs: Record<EndpointAction, { verb: Verb; any: boolean; role?: string }> = {
  metrics: { verb: 'get', any: true },
  report: { verb: 'get', any: false },
  sync: { verb: 'update', any: false, role: 'management-admin' },
};

function permitted(who: Identity, action: EndpointAction, group: string): boolean {
  const { verb, any, role } = needs[action];
  if (role && !who.clusterRoles.has(role)) return false;
  const ok = (resource: Resource) => roleVerbs(who.clusterRoles, resource).has(verb) && !scopeDenial(who.scope, { verb, group, resource });
  return any ? servedPlurals.some(ok) : servedPlurals.every(ok);
}

const actionOf = (a: NonResourceAttributes): EndpointAction | undefined =>
  (Object.keys(endpointPaths) as EndpointAction[]).find((k) => endpointPaths[k].verb === a.verb && endpointPaths[k].path === a.path);

/** The decision for a non-resource request (authorize() in decision.ts routes these here). */
export function nonResourceDecision(group: string, a: NonResourceAttributes): Decision {
  if (a.verb === 'get' && discoveryPaths.test(a.path)) return { decision: 'allow', grants: [] };
  const action = actionOf(a);
  return action && permitted(a.user, action, group) ? { decision: 'allow', grants: [] } : { decision: 'noOpinion', grants: [] };
}

/** What `who` may request outside the resource API, as a SelfSubjectRulesReview's nonResourceRules. */
export function nonResourceRules(group: string, who: Identity): { verbs: string[]; nonResourceURLs: string[] }[] {
  const endpoints = Object.values(endpointPaths).filter((e) => nonResourceDecision(group, { user: who, ...e }).decision === 'allow');
  return [{ verbs: ['get'], nonResourceURLs: discoveryURLs }, ...endpoints.map((e) => ({ verbs: [e.verb], nonResourceURLs: [e.path] }))];
}
