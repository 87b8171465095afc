/**
 * Who may impersonate, the one statement of it: the `impersonate` verb on kube's user-info kinds
 * (users and groups in the core group, uids and userextras in authentication.k8s.io), held through
 * an impersonating role (roles.ts) and allowed by the key's scope. The Impersonate-* headers
 * (impersonation.ts) and kubectl's SelfSubject*Reviews (server/auth/access.ts) both ask it.
 */
import type { Identity } from './identity.js';
import { impersonationResources, rolesImpersonate, type ImpersonationResource } from './roles.js';
import { scopeDenial, type Scope } from './scope.js';

/** The API group of each kind impersonation names, as kube RBAC spells it. */
export const impersonationGroups: Record<ImpersonationResource, string> = {
  users: '',
  groups: '',
  uids: 'authentication.k8s.io',
  userextras: 'authentication.k8s.io',
};

/** One thing asked to be impersonated: a user, a group, a uid, or an extra's value (its key as subresource). */
export interface ImpersonatedAttribute {
  resource: ImpersonationResource;
  /** Absent only in a SelfSubjectRulesReview asking about every name. */
  name?: string;
  subresource?: string;
}

/** Whether a scope lets its key impersonate anything at all (every kind, any name). */
export function scopeAllowsImpersonation(scope: Scope | undefined): boolean {
  return impersonationResources.every((resource) => scopeDenial(scope, { verb: 'impersonate', group: impersonationGroups[resource], resource }) === undefined);
}

/** undefined when `who` may impersonate `a`; otherwise why not (empty: it holds no such role). */
export function impersonationDenial(who: Pick<Identity, 'clusterRoles' | 'scope'>, a: ImpersonatedAttribute): string | undefined {
  if (!rolesImpersonate(who.clusterRoles)) return '';
  return scopeDenial(who.scope, { verb: 'impersonate', group: impersonationGroups[a.resource], resource: a.resource, ...(a.name !== undefined ? { name: a.name } : {}), ...(a.subresource ? { subresource: a.subresource } : {}) });
}

/** The `impersonate` rules `who` holds, as a rules review (can-i --list) lists them. */
export function impersonationRules(who: Pick<Identity, 'clusterRoles' | 'scope'>): { verbs: string[]; apiGroups: string[]; resources: string[] }[] {
  const held = impersonationResources.filter((resource) => impersonationDenial(who, { resource }) === undefined);
  const groups = [...new Set(held.map((r) => impersonationGroups[r]))];
  return groups.map((group) => ({ verbs: ['impersonate'], apiGroups: [group], resources: held.filter((r) => impersonationGroups[r] === group) }));
}

/** A SelfSubjectAccessReview's question about impersonation, as the attribute it asks of impersonationDenial; undefined when it asks another thing. */
export function impersonationQuestion(q: { verb: string; group: string; resource: string; subresource?: string; name?: string }): ImpersonatedAttribute | undefined {
  const resource = impersonationResources.find((r) => r === q.resource);
  if (!resource || impersonationGroups[resource] !== q.group || (q.verb !== 'impersonate' && q.verb !== '*')) return undefined;
  return { resource, ...(q.name ? { name: q.name } : {}), ...(q.subresource ? { subresource: q.subresource } : {}) };
}
