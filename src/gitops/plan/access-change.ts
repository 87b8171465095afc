/**
 * The plan's access change: for every identity whose rights the plan moves, what it gains and
 * loses, decided by the server's own authorize() (through the access review's grantsFor, which
 * asks authorizeVerbs for each identity, as a SelfSubjectAccessReview is answered) over the live
 * world and the world the plan leaves. Pure: teams, keys and a plan in, data out. The identities
 * asked are only those the plan touches (access-identities.ts), so one changed Team among 10,000
 * costs a few identities' work, not a review of everyone.
 */
import { isLoginKey } from '../../api/key-types.js';
import type { KubeObject, OwnedAccessKey, Team } from '../../api/types.js';
import { keyRefusal } from '../../auth/authenticate.js';
import { Authorizer } from '../../auth/authorize.js';
import { grantsAnything, withTeam, type TeamWorld } from '../../auth/grants.js';
import { identityFor, type Identity } from '../../auth/identity.js';
import { verbs as allVerbs } from '../../auth/roles.js';
import { teamWorldOf } from '../../auth/team-index.js';
import type { Plural } from '../../client/types.js';
import { grantsFor } from '../../review/compute.js';
import type { Step } from '../../review/model.js';
import { waysIn } from '../../review/paths.js';
import { KeyIndex, touchedIdentities } from './access-identities.js';
import { namedIn, objectNames, stepNames } from './access-names.js';
import { viaText } from './access-via.js';
import type { Plan } from './plan.js';
import { plannedObjects } from './planned-state.js';
import { rank } from './access-rank.js';

export { rank };

/** One verb on one object (or one cluster role) an identity gains or loses. */
export interface AccessEntry {
  /** `user:alice`, `group:eng`, `key:payments-ci` (a key judged as itself), `signIn:alice` (a Login key's person, with its groups). */
  identity: string;
  identityKind: 'user' | 'group' | 'key' | 'signIn';
  /** How a reviewer reads the identity: `alice`, `anyone in group eng`, `team key payments-ci`. */
  who: string;
  /** A verb, or `hold` for a cluster role (resource `clusterroles`). */
  verb: string;
  resource: 'teams' | 'ownedaccesskeys' | 'clusterroles';
  /** The Team's name, `*` for every object, `team=T` / `user=U` for the keys of a team or user, or the role's name. */
  name: string;
  /** As the access review names it: `teams/payments`, `ownedaccesskeys[team=payments]`, `clusterroles/management-admin`. */
  object: string;
  /** The cluster role the right comes through, or empty. */
  role: string;
  /** Each way the identity holds it (in the world that has it): `team payments-admins (group eng-leads), access rule 0 of team payments`. */
  via: string[];
}

export { namedIn };

export interface AccessChange {
  /** Identities asked (touched by the plan) and identities whose rights moved. */
  identitiesChecked: number;
  identitiesChanged: number;
  gains: AccessEntry[];
  losses: AccessEntry[];
  /** Pull-request mode: changes not shown because they would name a user, group, key or team the source does not name. */
  withheld?: number;
}

export interface AccessChangeInput {
  teams: Team[];
  /** Every live key, Login keys included (their people's rights move with their groups' teams). */
  keys: OwnedAccessKey[];
  plan: Plan;
  group: string;
  now: Date;
  /**
   * Pull-request mode: whether a name may be shown (the source names it). A change whose identity,
   * or every path to it, names anything else is counted in `withheld`, not shown: a pull request
   * may not read who belongs to teams its manifests do not describe.
   */
  mayName?: (name: string) => boolean;
}

type World = TeamWorld;

/** Past this many changed Teams the planned world is indexed anew instead of overlaid team by team. */
const overlayLimit = 32;

/** What authorization reads of a Team: the rest (labels, descriptions) never moves a right. */
const grantFields = (t: Team | undefined) => (grantsAnything(t) ? JSON.stringify([t.spec?.users, t.spec?.groups, t.spec?.clusterRoles, t.spec?.owner, t.spec?.access]) : '');

function plannedWorld(live: World, liveTeams: Team[], changed: Map<string, Team | undefined>): World {
  if (changed.size > overlayLimit) {
    const kept = liveTeams.filter((t) => !changed.has(t.metadata.name!));
    return teamWorldOf([...kept, ...[...changed.values()].filter((t): t is Team => t !== undefined)]);
  }
  let w: World = live;
  for (const [name, team] of changed) w = withTeam(w, name, team);
  return w;
}

/** Every (verb, object) an identity holds (`verb object`, `verb object listed`), with each path to it; a key that authenticates as nobody holds none. */
function rightsOf(who: Identity | undefined, world: World, authz: Authorizer): Map<string, Step[][]> {
  const out = new Map<string, Step[][]>();
  if (!who) return out;
  for (const g of grantsFor(who, world, authz)) {
    // The open list (list and watch every object, filtered to what may be read) answers for no
    // object by name: a right of its own, so losing `list` through a role is a loss beside it.
    const listed = g.via.some((s) => s.step === 'listed') ? ' listed' : '';
    for (const v of g.verbs) {
      const k = `${v} ${g.object}${listed}`;
      const paths = out.get(k);
      if (paths) paths.push(g.via);
      else out.set(k, [g.via]);
    }
  }
  // A cluster role is more than its verbs (management-admin reads the audit trail): held roles are rights too.
  for (const role of who.clusterRoles) {
    const via: Step[][] = who.teams
      .filter((t) => (world.get(t)?.spec?.clusterRoles ?? []).some((r) => r.name === role))
      .flatMap((t) => waysIn(who, t, world).map((by): Step[] => [{ step: 'member', team: t, by }]));
    out.set(`hold clusterroles/${role}`, via);
  }
  return out;
}

/**
 * The objects whose rows also answer for `object`: every Team for one Team; every key, and the keys
 * of every team, for a team's keys. As a SelfSubjectAccessReview asks: a row of the open list
 * (`list` on every Team, which shows only what the caller may get) answers for no object by name.
 */
function parents(object: string): string[] {
  if (object.startsWith('teams/') && object !== 'teams/*') return ['teams/*'];
  if (object.startsWith('ownedaccesskeys[team=') && object !== 'ownedaccesskeys[team=*]') return ['ownedaccesskeys/*', 'ownedaccesskeys[team=*]'];
  if (object.startsWith('ownedaccesskeys[')) return ['ownedaccesskeys/*'];
  return [];
}

function coveredByParent(rights: Map<string, Step[][]>, k: string): boolean {
  const [verb, object] = k.split(' ', 2) as [string, string];
  return parents(object).some((o) => rights.has(`${verb} ${o}`));
}

const covers = (rights: Map<string, Step[][]>, k: string): boolean => rights.has(k) || coveredByParent(rights, k);

/** The resource and name of an access-review object. */
function target(object: string): Pick<AccessEntry, 'resource' | 'name'> {
  const bracket = /^ownedaccesskeys\[(.*)\]$/.exec(object);
  if (bracket) return { resource: 'ownedaccesskeys', name: bracket[1]! };
  const [resource, ...rest] = object.split('/');
  return { resource: resource as AccessEntry['resource'], name: rest.join('/') };
}

interface Asked {
  identity: string;
  /** The names the identity's line shows. */
  names: string[];
  identityKind: AccessEntry['identityKind'];
  who: string;
  before: Identity | undefined;
  after: Identity | undefined;
}

/** The plan's access change between the live world and the one it leaves. */
export function accessChange(input: AccessChangeInput): AccessChange {
  const live = { teams: input.teams as KubeObject[], ownedaccesskeys: input.keys.filter((k) => !isLoginKey(k)) as KubeObject[] };
  const planned = plannedObjects(input.plan, live);
  const changedTeams = new Map<string, Team | undefined>();
  for (const [name, p] of planned.teams) if (grantFields(p.before as Team | undefined) !== grantFields(p.after as Team | undefined)) changedTeams.set(name, p.after as Team | undefined);
  const changedKeys = [...planned.ownedaccesskeys.values()].filter((p) => JSON.stringify(p.before?.spec) !== JSON.stringify(p.after?.spec));
  const out: AccessChange = { identitiesChecked: 0, identitiesChanged: 0, gains: [], losses: [] };
  if (changedTeams.size === 0 && changedKeys.length === 0) return out;

  const before = teamWorldOf(input.teams);
  const after = plannedWorld(before, input.teams, changedTeams);
  const worlds = [before, after] as const;
  const authz = [new Authorizer(before, input.group), new Authorizer(after, input.group)] as const;
  const keysBefore = new Map(input.keys.map((k) => [k.metadata.name!, k]));
  const keysAfter = (name: string): OwnedAccessKey | undefined => {
    const p = planned.ownedaccesskeys.get(name);
    return p ? (p.after as OwnedAccessKey | undefined) : keysBefore.get(name);
  };
  const index = new KeyIndex([...input.keys, ...changedKeys.flatMap((p) => (p.after ? [p.after as OwnedAccessKey] : []))]);
  const touched = touchedIdentities(changedTeams.keys(), changedKeys as { before?: OwnedAccessKey; after?: OwnedAccessKey }[], (w, n) => worlds[w].get(n), index);

  const asked: Asked[] = [];
  for (const u of touched.users) asked.push({ identity: `user:${u}`, names: [u], identityKind: 'user', who: u, before: identityFor({ user: u }, before, ''), after: identityFor({ user: u }, after, '') });
  for (const g of touched.groups) asked.push({ identity: `group:${g}`, names: [g], identityKind: 'group', who: `anyone in group ${g}`, before: identityFor({ subject: '', groups: [g] }, before, ''), after: identityFor({ subject: '', groups: [g] }, after, '') });
  const people = new Set<string>();
  for (const name of touched.keys) {
    const was = keysBefore.get(name);
    const is = keysAfter(name);
    const key = (is ?? was)!;
    const created = planned.ownedaccesskeys.get(name)?.created === true;
    const identityIn = (w: 0 | 1, k: OwnedAccessKey | undefined) => (k && !refused(k, worlds[w], input.now, w === 1 && created) ? identityFor(k.spec ?? {}, worlds[w], name) : undefined);
    if (isLoginKey(key)) {
      // A Login key is its person, signed in with their provider's groups: one line per person and groups.
      const groups = [...new Set(key.spec?.identity?.groups ?? [])].sort();
      const id = `signIn:${key.spec?.user ?? ''}${groups.length ? `[${groups.join(',')}]` : ''}`;
      if (people.has(id)) continue;
      people.add(id);
      const person = { user: key.spec?.user ?? '', groups };
      asked.push({ identity: id, names: [person.user, ...groups], identityKind: 'signIn', who: `${person.user} (signed in${groups.length ? ` with group${groups.length === 1 ? '' : 's'} ${groups.join(', ')}` : ''})`, before: identityFor(person, before, ''), after: identityFor(person, after, '') });
      continue;
    }
    const owner = key.spec?.team ? `team key ${name}` : key.spec?.user ? `key ${name} of ${key.spec.user}` : `key ${name}`;
    asked.push({ identity: `key:${name}`, names: [name, ...(key.spec?.team ? [key.spec.team] : key.spec?.user ? [key.spec.user] : [])], identityKind: 'key', who: owner, before: identityIn(0, was), after: identityIn(1, is) });
  }

  const { mayName } = input;
  let withheld = 0;
  for (const a of asked) {
    out.identitiesChecked++;
    const had = rightsOf(a.before, before, authz[0]);
    const has = rightsOf(a.after, after, authz[1]);
    let moved = false;
    const push = (list: AccessEntry[], k: string, all: Step[][]) => {
      moved = true;
      const [verb, object] = k.split(' ', 2) as [string, string];
      const paths = mayName ? all.filter((p) => stepNames(p).every(mayName)) : all;
      if (mayName && (!a.names.every(mayName) || !objectNames(object).every(mayName) || (paths.length === 0 && all.length > 0))) return void withheld++;
      const role = paths.flatMap((p) => p.filter((s) => s.step === 'role').map((s) => (s as { role: string }).role))[0] ?? (verb === 'hold' ? target(object).name : '');
      list.push({ identity: a.identity, identityKind: a.identityKind, who: a.who, verb, ...target(object), object, role, via: [...new Set(paths.map(viaText))] });
    };
    // A right is gained when the planned world holds it and the live world did not, on the object
    // or on one covering it (`teams/*` covers `teams/payments`); one the planned world holds only
    // through a covering object is that object's line, not a line of its own. Losses alike.
    for (const [k, paths] of has) if (!coveredByParent(has, k) && !covers(had, k)) push(out.gains, k, paths);
    for (const [k, paths] of had) if (!coveredByParent(had, k) && !covers(has, k)) push(out.losses, k, paths);
    if (moved) out.identitiesChanged++;
  }
  if (mayName) out.withheld = withheld;
  const order = (x: AccessEntry, y: AccessEntry) => rank(x) - rank(y) || cmp(x.identity, y.identity) || cmp(x.object, y.object) || allVerbs.indexOf(x.verb as never) - allVerbs.indexOf(y.verb as never);
  out.gains.sort(order);
  out.losses.sort(order);
  return out;
}

/**
 * Whether a key authenticates as nobody in a world, as authentication decides. A key the plan
 * creates is bound to its team by the server on create (registry/team-binding.ts), so its team
 * binding is taken as made.
 */
function refused(key: OwnedAccessKey, world: World, now: Date, created: boolean): boolean {
  if (!created || !key.spec?.team) return keyRefusal(key, now, undefined, world) !== undefined;
  const uid = world.get(key.spec.team)?.metadata.uid;
  const bound = { ...key, metadata: { ...key.metadata, ownerReferences: [{ apiVersion: '', kind: 'Team', name: key.spec.team, uid: uid as string }] } };
  return keyRefusal(bound, now, undefined, world) !== undefined;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
