/**
 * What a grant confers, as a list of atoms, and whether a writing key holds each atom. Permission
 * here is a union of grants (roles, ownership, access rules, own keys): no grant narrows another,
 * so what an identity gains from a write is always within what the write's grant confers.
 */
import type { Team } from '../api/types.js';
import type { Authorizer } from './authorize.js';
import type { Identity } from './identity.js';
import { impersonatingRoles, managementRole, roleVerbs, verbs as allVerbs, type Resource, type Verb } from './roles.js';
import { scopeAllowsImpersonation } from './impersonation-rights.js';
import { scopeDenial } from './scope.js';

/** The teams a decision may look at: the team index, or the index with one team replaced. */
export interface TeamWorld {
  get(name: string): Team | undefined;
  /**
   * The teams whose owner or access rules name this user or one of these teams: the only teams on
   * which a principal without roles holds any verb (an index, so a decision never walks every team).
   */
  referencing(user: string | undefined, teams: readonly string[]): Iterable<string>;
  teamsOf(user: string | undefined, groups: string[]): string[];
  /**
   * The teams whose AccessRequests this user approves (api/access-request.ts isApprover: its owner
   * is the user or one of these teams, or its accessRequests.approvers name the user). Optional: a
   * world without it makes a restricted reader's list of AccessRequests read every one.
   */
  approving?(user: string, teams: readonly string[]): Iterable<string>;
  /**
   * The teams whose spec.accessRequests.breakGlass.users name this user: memberships any key of
   * the user may take at will. Optional: a world without it knows of none.
   */
  breakingGlass?(user: string): Iterable<string>;
}

/**
 * Whether a team grants anything: a terminating one (deletionTimestamp set) does not. Its members,
 * owner, access rules and cluster roles are on their way out; while finalizers hold it, they would
 * otherwise keep working for as long as whoever holds a finalizer likes.
 */
export const grantsAnything = (team: Team | undefined): team is Team => team !== undefined && !team.metadata.deletionTimestamp;

/** Whether `user` or one of `groups` is a member of a team that grants anything. */
export function isMember(team: Team | undefined, user: string | undefined, groups: readonly string[]): boolean {
  return memberBy(team, user, groups).length > 0;
}

/** How `user` or `groups` belong to a team: `users`, and `group:<name>` for each group it lists; none for a terminating team. */
export function memberBy(team: Team | undefined, user: string | undefined, groups: readonly string[]): string[] {
  if (!grantsAnything(team)) return [];
  const out: string[] = [];
  // Lists only: one string stored where a list goes (past the API) would match by substring.
  if (user !== undefined && listed(team.spec?.users).includes(user)) out.push('users');
  for (const g of new Set(listed(team.spec?.groups))) if (typeof g === 'string' && groups.includes(g)) out.push(`group:${g}`);
  return out;
}

/** A list field as the schema gives it; nothing from another shape (a Team stored past the API). */
export const listed = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);

/**
 * The owner and access-rule references of a team, as index tokens (`u:` users, `t:` teams); none
 * for a terminating team. Lists read as lists and names that are strings only (a stored Team of a
 * shape the schema would refuse grants nothing through such a field: the grants compare names with
 * ===), so a Team read raw from the store (the watch cache's references index) cannot make it throw,
 * and its JSON holds the text of every token made from it.
 */
export function referenceTokens(team: Team | undefined): Set<string> {
  const out = new Set<string>();
  if (!grantsAnything(team)) return out;
  const add = (tag: string, name: unknown) => typeof name === 'string' && name !== '' && out.add(tag + name);
  const owner = team?.spec?.owner;
  add('u:', owner?.user);
  add('t:', owner?.team);
  for (const rule of listed(team?.spec?.access)) {
    if (typeof rule !== 'object' || rule === null) continue;
    for (const u of listed((rule as { users?: unknown }).users)) add('u:', u);
    for (const t of listed((rule as { teams?: unknown }).teams)) add('t:', t);
  }
  return out;
}

/** The tokens a principal is referenced by. */
export const principalTokens = (user: string | undefined, teams: readonly string[]): string[] => [...(user !== undefined ? [`u:${user}`] : []), ...teams.map((t) => `t:${t}`)];

/** One unit of permission: a cluster role, a verb on one team, or every verb on one user's keys. */
export type Atom =
  | { kind: 'role'; role: string }
  | { kind: 'team'; verb: Verb; team: string }
  | { kind: 'userKeys'; user: string }
  /** Every verb on a team's keys: what `update` on the team brings (authorize.ts keyVerbs). */
  | { kind: 'teamKeys'; team: string };

/** A readable name for an atom, used in 403 messages and to compare atom sets. */
export function describe(a: Atom): string {
  if (a.kind === 'role') return `cluster role "${a.role}"`;
  if (a.kind === 'team') return `"${a.verb}" on team "${a.team}"`;
  if (a.kind === 'teamKeys') return `the access keys of team "${a.team}"`;
  return `the access keys of user "${a.user}"`;
}

/** The identity a key or a team membership amounts to: a user, the teams, the roles they grant. */
export interface Principal {
  user?: string;
  teams: string[];
}

/** Everything a principal holds in this world: its teams' roles, its verbs on every team, its own keys. */
export function grantsOf(p: Principal, world: TeamWorld, authz: Authorizer): Atom[] {
  const atoms: Atom[] = [];
  const roles = new Set<string>();
  for (const t of p.teams) {
    const team = world.get(t);
    if (grantsAnything(team)) for (const r of team.spec?.clusterRoles ?? []) roles.add(r.name);
  }
  for (const role of [...roles].sort()) atoms.push({ kind: 'role', role });
  // Ownership and access rules only: what roles give is counted by the role atoms above. Without
  // roles, only the teams that name the principal give it verbs.
  const bare: Identity = { name: '', groups: [], teams: p.teams, clusterRoles: new Set(), keyName: '', ...(p.user ? { user: p.user } : {}) };
  for (const name of [...world.referencing(p.user, p.teams)].sort()) {
    const held = authz.teamVerbs(bare, world.get(name));
    for (const verb of held) atoms.push({ kind: 'team', verb, team: name });
    if (held.has('update')) atoms.push({ kind: 'teamKeys', team: name });
  }
  if (p.user) atoms.push({ kind: 'userKeys', user: p.user });
  return atoms;
}

/** What membership in `team` confers: its roles, and ownership and access rules naming it. */
export function membershipGrants(team: string, world: TeamWorld, authz: Authorizer): Atom[] {
  return grantsOf({ teams: [team] }, world, authz);
}

/** Atoms in `next` that `prev` does not have. */
export function added(next: Atom[], prev: Atom[]): Atom[] {
  const had = new Set(prev.map(describe));
  return next.filter((a) => !had.has(describe(a)));
}

/**
 * Whether the writer holds an atom. With `scoped`, the writer's scope must allow it too; without,
 * the caller has established otherwise that whatever uses the atom is at least as narrow.
 */
export function holds(writer: Identity, atom: Atom, world: TeamWorld, authz: Authorizer, scoped: boolean): boolean {
  const group = authz.group;
  const scopeAllows = (verb: Verb, resource: Resource, name?: string) =>
    !scoped || scopeDenial(writer.scope, { verb, group, resource, ...(name ? { name } : {}) }) === undefined;
  const superuser = writer.clusterRoles.has('management-admin');
  switch (atom.kind) {
    case 'role': {
      // management-admin confers more than its verbs (the audit trail, POST /sync are checked by its
      // name), so only a holder of the role itself holds it: equivalent verbs are not enough.
      if (atom.role === 'management-admin' && !superuser) return false;
      // A role that lets one act as anyone is held only by whoever may impersonate (its scope allowing).
      if (impersonatingRoles.includes(atom.role) && !(impersonatingRoles.some((r) => writer.clusterRoles.has(r)) && (!scoped || scopeAllowsImpersonation(writer.scope)))) return false;
      const grants = managementRole(atom.role);
      if (!grants) {
        // A role for clusters elsewhere: a scope cannot be read for it, so only an unscoped holder counts.
        return (superuser || writer.clusterRoles.has(atom.role)) && (!scoped || !hasScope(writer));
      }
      return (Object.entries(grants) as [Resource, readonly Verb[]][]).every(([resource, vs]) => {
        const held = roleVerbs(writer.clusterRoles, resource);
        return vs.every((v) => held.has(v) && scopeAllows(v, resource));
      });
    }
    case 'team':
      return authz.teamVerbs(writer, world.get(atom.team)).has(atom.verb) && scopeAllows(atom.verb, 'teams', atom.team);
    case 'userKeys':
    case 'teamKeys': {
      const admin = roleVerbs(writer.clusterRoles, 'ownedaccesskeys').size === allVerbs.length;
      const owns = atom.kind === 'userKeys' ? writer.user === atom.user : authz.teamVerbs(writer, world.get(atom.team)).has('update');
      return (admin || owns) && allVerbs.every((v) => scopeAllows(v, 'ownedaccesskeys'));
    }
  }
}

/** What a refusal may name: a 403 names only what its reader may read (see mayNameFor in escalation.ts). */
export type MayName = (a: Atom) => boolean;

/** The phrase for every missing atom a refusal may not name: that something is missing, not what. */
export const unnamedRights = 'rights on teams you may not read';

/**
 * The atoms the writer lacks, as one phrase for a 403, or undefined when it holds them all. Atoms
 * `mayName` refuses are summed up as one phrase (unnamedRights), so a refusal reveals no team,
 * access rule or verb its reader may not read.
 */
export function lacking(writer: Identity, atoms: Atom[], world: TeamWorld, authz: Authorizer, scoped: boolean, mayName: MayName = () => true): string | undefined {
  const missing = atoms.filter((a) => !holds(writer, a, world, authz, scoped));
  if (missing.length === 0) return undefined;
  // Verbs on one team read as one phrase: `"get", "delete" on team "x"`, or every verb.
  const byTeam = new Map<string, Set<string>>();
  const others = new Set<string>();
  let hidden = false;
  for (const a of missing) {
    if (!mayName(a)) hidden = true;
    else if (a.kind !== 'team') others.add(describe(a));
    else if (!byTeam.has(a.team)) byTeam.set(a.team, new Set([a.verb]));
    else byTeam.get(a.team)!.add(a.verb);
  }
  const teams = [...byTeam].map(([team, vs]) => (vs.size === allVerbs.length ? `every verb on team "${team}"` : `${[...vs].map((v) => `"${v}"`).join(', ')} on team "${team}"`));
  const list = [...teams, ...others, ...(hidden ? [unnamedRights] : [])];
  return list.length > 4 ? `${list.slice(0, 4).join('; ')} and ${list.length - 4} more` : list.join('; ');
}

export function hasScope(who: { scope?: Identity['scope'] }): boolean {
  const s = who.scope;
  return s !== undefined && Object.values(s).some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined && v !== false && v !== ''));
}

/** The index as it will be once `next` replaces the team of its name (or `name` is removed). */
export function withTeam(world: TeamWorld, name: string, next: Team | undefined): TeamWorld {
  return {
    get: (n) => (n === name ? next : world.get(n)),
    referencing: (user, teams) => {
      const out = new Set(world.referencing(user, teams));
      out.delete(name);
      const mine = referenceTokens(next);
      if (principalTokens(user, teams).some((t) => mine.has(t))) out.add(name);
      return out;
    },
    teamsOf: (user, groups) => {
      const out = new Set(world.teamsOf(user, groups));
      out.delete(name);
      if (isMember(next, user, groups)) out.add(name);
      return [...out].sort();
    },
    breakingGlass: (user) => {
      const out = new Set(world.breakingGlass?.(user) ?? []);
      out.delete(name);
      if (grantsAnything(next) && (next.spec?.accessRequests?.breakGlass?.users ?? ([] as readonly string[])).includes(user)) out.add(name);
      return [...out].sort();
    },
  };
}

/** Every verb on a team, as atoms. */
export const allTeamVerbs = (team: string): Atom[] => allVerbs.map((verb) => ({ kind: 'team', verb, team }));
