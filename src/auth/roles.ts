/** The management roles a Team's spec.clusterRoles can grant, and what each allows. */
import { verbs, type ManagementRole } from '../api/grant-vocabulary.js';
import type { Plural } from '../api/resources.js';

export { verbs };
export type Verb = (typeof verbs)[number];
export const readVerbs: readonly Verb[] = ['get', 'list', 'watch'];

/** A served resource, by its plural (the kind table in api/resources.ts). */
export type Resource = Plural;

/** Role name -> resource -> verbs. Other cluster role names grant nothing on this API. */
export const managementRoles: Record<string, Partial<Record<Resource, readonly Verb[]>>> = {
  'management-admin': { teams: verbs, ownedaccesskeys: verbs, federatedcredentials: verbs },
  'teams-admin': { teams: verbs },
  'teams-viewer': { teams: readVerbs },
  'teams-creator': { teams: ['create'] },
  // A trust rule mints keys: whoever may make any key may write any rule (escalation.ts judges both alike).
  'accesskeys-admin': { ownedaccesskeys: verbs, federatedcredentials: verbs },
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
  return roles.has('management-admin') || (resource === 'teams' ? roles.has('teams-admin') : roles.has('accesskeys-admin'));
}
