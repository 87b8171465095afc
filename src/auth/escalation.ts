/**
 * No escalation, the one place it is decided: a write succeeds only if no identity gains a
 * permission the writing key does not hold (its user's rights narrowed by its scope, its expiry
 * and its teams). Membership in a team grants everything a member gets; a key grants everything
 * its identity gets, to whoever holds its value. Each check returns why a write is refused, or
 * undefined. Deletes are not checked: permission is a union of grants, so removing one never
 * widens anyone (name reuse is closed by the checks on create and by team keys' uid binding).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, OwnedAccessKey, OwnedAccessKeySpec, Team } from '../api/types.js';
import type { Authorizer } from './authorize.js';
import { expiresAt } from './expiry.js';
import { authView } from './team-view.js';
import { added, allTeamVerbs, describe, grantsOf, hasScope, holds, lacking, membershipGrants, withTeam, type Atom, type MayName, type TeamWorld } from './grants.js';
import type { Identity } from './identity.js';
import { standingOf, withTemporaryAccess, type TemporaryGrant } from './temporary-access.js';
import { isAdminFor, verbs as allVerbs } from './roles.js';
import { scopeDenial } from './scope.js';
import { scopeWithin } from './scope-containment.js';
import { ownerReferencesOf } from '../api/owner-references.js';
import { defaultBreakGlassMs, defaultRequestMs, goDurationMs } from '../api/access-request.js';

const roleNames = (t: Team | undefined) => new Set((t?.spec?.clusterRoles ?? []).map((r) => r.name));
const addedItems = <T>(next: T[] = [], old: T[] = []) => next.filter((x) => !old.some((o) => isDeepStrictEqual(o, x)));
const quoted = (xs: string[]) => xs.map((x) => `"${x}"`).join(', ');

/** Whether `who` may read team `name` as it is: a refusal names only such teams. */
export function mayRead(who: Identity, authz: Authorizer, world: TeamWorld, name: string): boolean {
  return authz.teamVerbs(who, world.get(name)).has('get') && scopeDenial(who.scope, { verb: 'get', group: authz.group, resource: 'teams', name }) === undefined;
}

/**
 * What a refusal to `who` may name: the team being written (its content is the request's), roles
 * the request itself names or that come from `roleSources` teams it may read, and teams it may read.
 */
export function mayNameFor(who: Identity, authz: Authorizer, world: TeamWorld, written?: string, roleSources?: readonly string[]): MayName {
  return (a) => {
    if (a.kind === 'userKeys') return true;
    if (a.kind === 'role') return !roleSources || roleSources.some((t) => roleNames(world.get(t)).has(a.role) && mayRead(who, authz, world, t));
    return a.team === written || mayRead(who, authz, world, a.team);
  };
}

/** A duration of the request policy in ms, its default when absent (an unreadable one counts as the longest). */
const policyMs = (text: string | undefined, fallback: number) => (text === undefined ? fallback : (goDurationMs(text) ?? Infinity));

/**
 * How a write loosens the team's request policy (spec.accessRequests), in words, or undefined:
 * approvers named, fewer approvals required, requests or break-glass ones allowed to last longer.
 * Tightening hands nothing on, as a removed member does not.
 */
function loosenedRequestPolicy(old: Team | undefined, next: Team): string | undefined {
  const was = old?.spec?.accessRequests;
  const is = next.spec?.accessRequests;
  if (addedItems(is?.approvers, was?.approvers).length > 0) return 'naming approvers in spec.accessRequests.approvers';
  if ((is?.requiredApprovals ?? 1) < (was?.requiredApprovals ?? 1)) return 'lowering spec.accessRequests.requiredApprovals';
  if (policyMs(is?.maxDuration, defaultRequestMs) > policyMs(was?.maxDuration, defaultRequestMs)) return 'lengthening spec.accessRequests.maxDuration';
  if (is?.breakGlass && policyMs(is.breakGlass.maxDuration, defaultBreakGlassMs) > policyMs(was?.breakGlass ? was.breakGlass.maxDuration : '0s', defaultBreakGlassMs)) {
    return 'lengthening spec.accessRequests.breakGlass.maxDuration';
  }
  return undefined;
}

/**
 * What a Team write hands on, in words, or undefined: a member, group or break-glass user added, an
 * access rule or cluster role added, the owner changed, or the request policy loosened. A key's
 * previous value may not make such a write (server/auth/guard.ts): the access would outlive the
 * value being retired (found by a review).
 */
export function teamHandsOn(stored: Team | undefined, next: Team): string | undefined {
  const old = stored && authView(stored);
  const is = authView(next);
  const added = (field: string, a: unknown[] | undefined, b: unknown[] | undefined) => (addedItems(a, b).length > 0 ? field : undefined);
  return (
    added('spec.users', is.spec?.users, old?.spec?.users) ??
    added('spec.groups', is.spec?.groups, old?.spec?.groups) ??
    added('spec.accessRequests.breakGlass.users', is.spec?.accessRequests?.breakGlass?.users, old?.spec?.accessRequests?.breakGlass?.users) ??
    added('spec.access', is.spec?.access, old?.spec?.access) ??
    added('spec.clusterRoles', is.spec?.clusterRoles, old?.spec?.clusterRoles) ??
    (is.spec?.owner !== undefined && !isDeepStrictEqual(is.spec.owner, old?.spec?.owner) ? 'spec.owner' : undefined) ??
    (loosenedRequestPolicy(old, is) ? 'spec.accessRequests' : undefined)
  );
}

/** Team create or update: roles, members, owner, access rules, and what membership confers. */
export function teamEscalation(who: Identity, authz: Authorizer, world: TeamWorld, stored: Team | undefined, next: Team): string | undefined {
  // The stored Team as authorization reads it (team-view.ts): one of a shape the schema refuses,
  // written past the API, is then judged (its odd fields naming nobody, so whatever the write names
  // counts as added) instead of failing the write that would repair it.
  const old = stored && authView(stored);
  const name = next.metadata.name!;
  const after = withTeam(world, name, next);
  const can = (atoms: Atom[]) => lacking(who, atoms, world, authz, true, mayNameFor(who, authz, world, name));
  const roleAtoms = (roles: Iterable<string>): Atom[] => [...roles].sort().map((role) => ({ kind: 'role', role }));
  const roles = roleNames(next);
  const before = roleNames(old);
  const widened = [...roles].filter((r) => !before.has(r));
  if (widened.length > 0) {
    const missing = roleAtoms(widened).filter((a) => !holds(who, a, world, authz, true));
    if (missing.length > 0) return `granting cluster role(s) ${quoted(missing.map((a) => (a as { role: string }).role))} requires holding them`;
  }
  // A break-glass user takes the membership at will (api/access-request.ts): naming one adds a member.
  const breakGlass = (t: Team | undefined) => t?.spec?.accessRequests?.breakGlass?.users;
  const newMembers = [...addedItems(next.spec?.users, old?.spec?.users), ...addedItems(next.spec?.groups, old?.spec?.groups), ...addedItems(breakGlass(next), breakGlass(old))];
  if (newMembers.length > 0) {
    const missing = roleAtoms(roles).filter((a) => !holds(who, a, world, authz, true));
    // Roles the team already had are named only to a caller who may read it (a patch needs no get).
    const named = !old || mayRead(who, authz, world, name) ? quoted(missing.map((a) => (a as { role: string }).role)) : 'cluster roles';
    if (missing.length > 0) return `adding members to a team that grants ${named} requires holding those roles`;
  }
  // Verbs on this team the writer may hand out: what it holds on it now, or on a team it creates
  // for itself (its own user or one of its teams as owner), every verb its scope allows.
  const owner = next.spec?.owner;
  const ownsNew = !old && owner !== undefined && ((owner.user !== undefined && owner.user === who.user && !owner.team) || (owner.team !== undefined && who.teams.includes(owner.team) && !owner.user));
  const onTeam = (verbs: Atom[]) => lacking(who, verbs, ownsNew ? withTeam(world, name, next) : world, authz, true);
  // `update` on a team also manages its keys (authorize.ts keyVerbs): granting it grants them.
  const withKeys = (atoms: Atom[]): Atom[] => (atoms.some((a) => a.kind === 'team' && a.verb === 'update') ? [...atoms, { kind: 'teamKeys', team: name }] : atoms);
  if (!isDeepStrictEqual(owner, old?.spec?.owner) && owner && onTeam(withKeys(allTeamVerbs(name)))) return 'changing spec.owner requires every verb on the team and its access keys';
  // Who approves the team's requests, how many must, and how long they last are the owner's say
  // over its membership: loosening them needs what changing the owner does (a review found a
  // temporary member with `update` named itself a standing approver, which outlived its access).
  const loosened = loosenedRequestPolicy(old, next);
  if (loosened && onTeam(withKeys(allTeamVerbs(name)))) return `${loosened} requires every verb on the team and its access keys, as changing spec.owner does`;
  for (const rule of addedItems(next.spec?.access, old?.spec?.access)) {
    const wanted = withKeys((rule.verbs ?? []).includes('*') ? allTeamVerbs(name) : allTeamVerbs(name).filter((a) => (rule.verbs ?? []).includes((a as { verb: string }).verb)));
    const missing = wanted.filter((a) => onTeam([a]));
    if (missing.length > 0) return `an access rule may grant only what you hold on the team; missing ${quoted(missing.map((a) => (a.kind === 'team' ? a.verb : describe(a))))}`;
  }
  // What membership confers (roles, ownership of and access to other teams naming this one).
  const confers = membershipGrants(name, after, authz);
  if (newMembers.length > 0) {
    const missing = can(confers);
    if (missing) return `adding members to team "${name}" would grant them ${missing}, which you do not hold`;
  }
  // Its members and keys gain whatever this change adds to membership.
  const gained = added(confers, old ? membershipGrants(name, world, authz) : confers);
  const missing = old ? can(gained) : undefined;
  if (missing) return `this change would give the members of team "${name}" ${missing}, which you do not hold`;
  return undefined;
}

const identityFields = ['user', 'team', 'subject', 'groups', 'identity'] as const;

/**
 * Whether a key write gives more than the key had: another identity, a wider scope, a longer life,
 * or a key-setting write (a new value, a re-enable: src/registry/keys.ts decides which).
 */
export function widens(old: OwnedAccessKey | undefined, next: OwnedAccessKey, setsKey: boolean, now: Date): boolean {
  if (!old || setsKey) return true;
  const o = old.spec;
  const n = next.spec;
  if (identityFields.some((f) => !isDeepStrictEqual(o[f], n[f]))) return true;
  const binding = (k: OwnedAccessKey) => ownerReferencesOf(k.metadata).filter((r) => r.kind === 'Team').map((r) => r.uid);
  if (!isDeepStrictEqual(binding(old), binding(next))) return true;
  if (!scopeWithin(n.scope, o.scope)) return true;
  if (n.ttlAfterLastActivity && !o.ttlAfterLastActivity) return true;
  const was = expiresAt(old) ?? Infinity;
  const will = expiresAt(next) ?? Infinity;
  return will > was && will > now.getTime();
}

/** Access key create or update: whom it acts for, its groups, identity, scope and lifetime. */
export function keyEscalation(
  who: Identity,
  authz: Authorizer,
  world: TeamWorld,
  old: OwnedAccessKey | undefined,
  next: OwnedAccessKey,
  opts: {
    setsKey: boolean;
    now: Date;
    /**
     * The Active AccessRequests' grants of the key's user, given when the writer is not that user
     * acting as itself (server/admission/escalation.ts): every request the key makes carries them,
     * and the teams the user may break the glass of, so whoever holds its value holds them too.
     */
    reach?: { grants: readonly TemporaryGrant[] };
  },
): string | undefined {
  const o: OwnedAccessKeySpec | undefined = old?.spec;
  const n = next.spec;
  const keysAdmin = isAdminFor(who.clusterRoles, 'ownedaccesskeys');
  // The rules DECISIONS.md names, with their messages; the general check below covers the rest.
  if (!keysAdmin) {
    if ((n.groups ?? []).length > 0 && !isDeepStrictEqual(n.groups, o?.groups)) return 'setting spec.groups requires the accesskeys-admin role';
    if (n.identity && !isDeepStrictEqual(n.identity, o?.identity)) return 'setting spec.identity requires the accesskeys-admin role';
    if (n.subject) return 'keys for a generic subject require the accesskeys-admin role';
    if (n.user && n.user !== who.user) return `keys for another user ("${n.user}") require the accesskeys-admin role`;
  }
  if (n.team && !authz.teamVerbs(who, world.get(n.team)).has('update') && !keysAdmin) {
    return `keys of team "${n.team}" are managed by those who may update the team`;
  }
  // A key moved to another user or team is handed to whoever manages those: they gain every verb
  // on the key object, so the writer must hold every verb on it too (its scope included).
  if (old && identityFields.some((f) => !isDeepStrictEqual(o?.[f], n[f]))) {
    const name = old.metadata.name;
    const lacks = allVerbs.filter((verb) => !authz.allowed(who, verb, 'ownedaccesskeys', old) || scopeDenial(who.scope, { verb, group: authz.group, resource: 'ownedaccesskeys', ...(name ? { name } : {}) }) !== undefined);
    if (lacks.length > 0) return `moving a key to another user or team hands it to whoever manages them; you lack ${quoted(lacks)} on it`;
  }
  if (!widens(old, next, opts.setsKey, opts.now)) return undefined;
  // What the key gains outlives the writer's temporary access: judged by its standing rights. The
  // checks above are the write's own (who may manage the key at all), judged by the full identity:
  // a temporary member on call disables a leaked team key (found by a review of the change).
  return widenedKeyEscalation(standingOf(who), authz, world, next, opts.reach);
}

/**
 * The teams and roles a key of `user` holds beyond its user's standing membership: its Active
 * AccessRequests' (authenticate.ts adds them to every request the key makes) and the teams whose
 * break-glass the user may take at will, whole. A key-maker who lacked them got them through a
 * key for a user on call (found by a review).
 */
function reachOf(user: string, standing: string[], groups: string[], reach: { grants: readonly TemporaryGrant[] }, world: TeamWorld): { teams: string[]; roles: string[] } {
  const temporary = withTemporaryAccess({ name: user, user, groups, teams: standing, clusterRoles: new Set(), keyName: '' }, reach.grants, world);
  const teams = [...new Set([...temporary.teams, ...(world.breakingGlass?.(user) ?? [])])].sort();
  return { teams, roles: [...temporary.clusterRoles].sort() };
}

/** A key write that widens the key: what the writer must hold for the key's new rights. */
function widenedKeyEscalation(who: Identity, authz: Authorizer, world: TeamWorld, next: OwnedAccessKey, reach?: { grants: readonly TemporaryGrant[] }): string | undefined {
  const n = next.spec;
  // A narrowed writer makes only keys at least as narrow: scope within its scope, expiry no later.
  if (hasScope(who) && !scopeWithin(n.scope, who.scope)) return "a key made or widened by a scoped key needs a scope within that key's scope";
  if (who.expiresAt !== undefined) {
    const until = new Date(who.expiresAt).toISOString();
    const will = n.ttlAfterLastActivity ? Infinity : (expiresAt(next) ?? Infinity);
    if (will > who.expiresAt) return `a key made or widened by a key that expires must expire no later (at ${until}, with a fixed ttl)`;
  }
  const groups = [...new Set([...(n.groups ?? []), ...(n.identity?.groups ?? [])])];
  const teams = n.team ? [n.team] : world.teamsOf(n.user, groups);
  if (n.team) {
    const missing = [...roleNames(world.get(n.team))].filter((role) => !holds(who, { kind: 'role', role }, world, authz, false));
    const named = mayRead(who, authz, world, n.team) ? quoted(missing.sort()) : 'cluster roles';
    if (missing.length > 0) return `a key of team "${n.team}" would grant ${named}, which you do not hold`;
  }
  // Scope containment is settled above, so the key's grants are compared without scopes.
  const mayName = mayNameFor(who, authz, world, undefined, teams);
  const missing = lacking(who, grantsOf({ ...(n.user ? { user: n.user } : {}), teams }, world, authz), world, authz, false, mayName);
  if (missing) return `the key would hold ${missing}, which you do not hold`;
  if (!reach || !n.user) return undefined;
  const beyond = reachOf(n.user, teams, groups, reach, world);
  const atoms = grantsOf({ user: n.user, teams: beyond.teams }, world, authz);
  const roles = beyond.roles.filter((role) => !atoms.some((a) => a.kind === 'role' && a.role === role)).map((role): Atom => ({ kind: 'role', role }));
  const temporary = lacking(who, [...atoms, ...roles], world, authz, false, mayNameFor(who, authz, world, undefined, beyond.teams));
  if (temporary) return `the key would hold ${temporary}, which you do not hold: its user "${n.user}" has it from an Active AccessRequest or may take it by breaking the glass, and every key of the user carries that`;
  return undefined;
}

/** The key as admission sees it, typed. */
export const asKey = (o: KubeObject | undefined) => o as OwnedAccessKey | undefined;


/**
 * Impersonation: acting as `user` with `groups` gives the impersonator, for the request, whatever
 * that user holds, and through it everything a key for that user would (it could make one). So it
 * may hold nothing the impersonator does not; scope and expiry are settled by the impersonated
 * identity keeping the impersonator's (auth/impersonation.ts).
 */
export function impersonationEscalation(who: Identity, authz: Authorizer, world: TeamWorld, user: string, groups: string[]): string | undefined {
  const teams = world.teamsOf(user, groups);
  const missing = lacking(who, grantsOf({ user, teams }, world, authz), world, authz, false, mayNameFor(who, authz, world, undefined, teams));
  return missing ? `impersonating "${user}" would give you ${missing}, which you do not hold` : undefined;
}
