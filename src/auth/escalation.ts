/**
 * No escalation, as Kubernetes RBAC prevents it: a write may grant only what the caller already
 * holds. Each check returns why a write is refused, or undefined.
 */
import { isDeepStrictEqual } from 'node:util';
import type { OwnedAccessKeySpec, Team } from '../api/types.js';
import type { Authorizer } from './authorize.js';
import type { Identity } from './identity.js';
import { verbs as allVerbs } from './roles.js';
import type { TeamIndex } from './team-index.js';

const roleNames = (t: Team | undefined) => new Set((t?.spec?.clusterRoles ?? []).map((r) => r.name));
const added = <T>(next: T[] = [], old: T[] = []) => next.filter((x) => !old.some((o) => isDeepStrictEqual(o, x)));

function missingRoles(who: Identity, roles: Iterable<string>): string[] {
  return [...roles].filter((r) => !who.clusterRoles.has(r)).sort();
}

const quoted = (xs: string[]) => xs.map((x) => `"${x}"`).join(', ');

/** Team create or update: roles, members, access rules and owner. */
export function teamEscalation(who: Identity, authz: Authorizer, old: Team | undefined, next: Team): string | undefined {
  if (who.clusterRoles.has('management-admin')) return undefined;
  const roles = roleNames(next);
  const before = roleNames(old);
  const widened = [...roles].some((r) => !before.has(r));
  const newMembers = added(next.spec?.users, old?.spec?.users).length + added(next.spec?.groups, old?.spec?.groups).length > 0;
  if (widened || (newMembers && roles.size > 0)) {
    const missing = missingRoles(who, roles);
    if (missing.length > 0) {
      return widened
        ? `granting cluster role(s) ${quoted(missing)} requires holding them`
        : `adding members to a team that grants ${quoted(missing)} requires holding those roles`;
    }
  }
  // What the caller may do on the team as it was (on create: what its roles allow, plus owning
  // a team it creates for itself).
  const held = old ? authz.teamVerbs(who, old) : authz.teamVerbs(who, undefined);
  const owner = next.spec?.owner;
  const ownerChanged = !isDeepStrictEqual(owner, old?.spec?.owner);
  const selfOwned = !old && owner !== undefined && owner.user === who.user && !owner.team;
  if (ownerChanged && owner && !selfOwned && !allVerbs.every((v) => held.has(v))) {
    return 'changing spec.owner requires every verb on the team';
  }
  const reachable = selfOwned ? new Set(allVerbs) : held;
  for (const rule of added(next.spec?.access, old?.spec?.access)) {
    const wanted = (rule.verbs ?? []).includes('*') ? [...allVerbs] : (rule.verbs ?? []);
    const missing = wanted.filter((v) => !reachable.has(v as (typeof allVerbs)[number]));
    if (missing.length > 0) return `an access rule may grant only verbs you hold on the team; missing ${quoted(missing)}`;
  }
  return undefined;
}

/** Access key create or update: whom it acts for, its groups and identity. */
export function keyEscalation(who: Identity, authz: Authorizer, teams: TeamIndex, old: OwnedAccessKeySpec | undefined, next: OwnedAccessKeySpec): string | undefined {
  if (who.clusterRoles.has('management-admin') || who.clusterRoles.has('accesskeys-admin')) return undefined;
  if ((next.groups ?? []).length > 0 && !isDeepStrictEqual(next.groups, old?.groups)) return 'setting spec.groups requires the accesskeys-admin role';
  if (next.identity && !isDeepStrictEqual(next.identity, old?.identity)) return 'setting spec.identity requires the accesskeys-admin role';
  if (next.subject) return 'keys for a generic subject require the accesskeys-admin role';
  if (next.user && next.user !== who.user) return `keys for another user ("${next.user}") require the accesskeys-admin role`;
  if (next.team) {
    const team = teams.get(next.team);
    if (!authz.teamVerbs(who, team).has('update')) return `keys of team "${next.team}" are managed by those who may update the team`;
    const missing = missingRoles(who, roleNames(team));
    if (missing.length > 0) return `a key of team "${next.team}" would grant ${quoted(missing)}, which you do not hold`;
  }
  return undefined;
}
