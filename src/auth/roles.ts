/** The management roles a Team's spec.clusterRoles can grant, and what each allows. */
import { verbs, type ManagementRole } from '../api/grant-vocabulary.js';
import type { ApiPlural } from '../api/resources.js';

export { verbs };
export type Verb = (typeof verbs)[number];
export const readVerbs: readonly Verb[] = ['get', 'list', 'watch'];

/** A served resource, by its plural (the kind table in api/resources.ts). */
export type Resource = ApiPlural;

/** Role name -> resource -> verbs. Other cluster role names grant nothing on this API. */
export const managementRoles: Record<string, Partial<Record<Resource, readonly Verb[]>>> = {
  'management-admin': { teams: verbs, ownedaccesskeys: verbs, federatedcredentials: verbs, accessrequests: verbs },
  'teams-admin': { teams: verbs },
  'teams-viewer': { teams: readVerbs },
  'teams-creator': { teams: ['create'] },
  // A trust rule mints keys: whoever may make any key may write any rule (escalation.ts judges both alike).
  'accesskeys-admin': { ownedaccesskeys: verbs, federatedcredentials: verbs },
  // Nothing on this API's kinds: the `impersonate` verb on users, groups, uids and userextras (below).
  impersonator: {},
} satisfies Record<ManagementRole, Partial<Record<Resource, readonly Verb[]>>>;

/**
 * What a management role grants, by a name a team chose: own entries only, so a role named
 * `constructor` or `__proto__` is an ordinary unknown role, not Object's function or prototype.
 */
export function managementRole(name: string): Partial<Record<Resource, readonly Verb[]>> | undefined {
  return Object.hasOwn(managementRoles, name) ? managementRoles[name] : undefined;
}

/** The verbs a set of held cluster roles grants on every object of a resource. */
export function roleVerbs(roles: Iterable<string>, resource: Resource): Set<Verb> {
  const out = new Set<Verb>();
  for (const role of roles) for (const v of managementRole(role)?.[resource] ?? []) out.add(v);
  return out;
}

export function isAdminFor(roles: ReadonlySet<string>, resource: Resource): boolean {
  if (roles.has('management-admin')) return true;
  return resource === 'teams' ? roles.has('teams-admin') : resource === 'ownedaccesskeys' && roles.has('accesskeys-admin');
}

/**
 * The `impersonate` verb, as kube RBAC grants it on the core group's users, groups, uids and
 * userextras (the Impersonate-* headers: auth/impersonation.ts). Held by these roles, on every
 * name: kube's `system:` built-ins aside, no finer rule is needed here.
 */
export const impersonationResources = ['users', 'groups', 'uids', 'userextras'] as const;
export type ImpersonationResource = (typeof impersonationResources)[number];
export const impersonatingRoles: readonly string[] = ['management-admin', 'impersonator'];

/** Whether held roles grant `impersonate` (scope aside: impersonation.ts asks that too). */
export const rolesImpersonate = (roles: ReadonlySet<string>): boolean => impersonatingRoles.some((r) => roles.has(r));
