/**
 * The access review, computed with the request path's own pieces: identities built as
 * authentication builds them (identityFor), decisions and their grants from authorizeVerbs() (the
 * Authorizer's grantsOn, the key's scope, the can-i rules), keys refused as authentication refuses
 * them (keyRefusal). Nothing here restates a rule; it only chooses what to ask and groups the answers.
 *
 * Cost: each identity is asked about every Team at once (teams/*), the Teams that name it (the
 * index's `referencing`, as the request path finds them) and the categories of keys, never about
 * every Team or key one by one, so 10,000 Teams and 100,000 keys stay a few seconds' work.
 */
import { defaultKeyType } from '../api/key-types.js';
import type { KubeObject, OwnedAccessKey, Team } from '../api/types.js';
import { keyRefusal } from '../auth/authenticate.js';
import { Authorizer, type Grant } from '../auth/authorize.js';
import { allows, authorizeVerbs, type Decision } from '../auth/decision.js';
import { expiresAt } from '../auth/expiry.js';
import { hasScope, type TeamWorld } from '../auth/grants.js';
import { identityFor, type Identity } from '../auth/identity.js';
import { verbs as allVerbs, type Resource, type Verb } from '../auth/roles.js';
import { teamWorldOf } from '../auth/team-index.js';
import { scopeSummary } from '../auth/scope-summary.js';
import { reviewKind, reviewVersion, type GrantEntry, type IdentityEntry, type KeyEntry, type ReviewDocument, type Step } from './model.js';
import { pathsOf, pathText, waysIn } from './paths.js';

export interface ReviewInput {
  teams: Team[];
  keys: OwnedAccessKey[];
  group: string;
  source: string;
  now: Date;
  /** Called now and then with how many identities are done, for a progress line. */
  onProgress?: (done: number, total: number) => void;
}

/** Verbs judged on a named object: create is judged by the new object's content, deletecollection only by roles. */
const objectVerbs: readonly Verb[] = allVerbs.filter((v) => v !== 'create' && v !== 'deletecollection');
/** A team name no Team can have: a key of it stands for "a key of any team", judged by roles alone. */
const anyTeam = '*';

type World = TeamWorld;

/** Groups decisions into entries: one per (object, path), with its verbs in the usual order. */
class Grants {
  private readonly byKey = new Map<string, GrantEntry>();
  constructor(
    private readonly who: Identity,
    private readonly world: World,
    private readonly lead: Step[],
  ) {}

  add(object: string, of: string, decisions: (Decision & { verb: Verb })[], keep: (g: Grant) => boolean = () => true): void {
    // One decision's grants are the same objects for every verb: their paths are worked out once.
    const paths = new Map<Grant, { via: Step[]; path: string }[]>();
    const pathsFor = (g: Grant) => {
      let known = paths.get(g);
      if (!known) {
        known = pathsOf(g, this.who, of, this.world).map((p) => {
          const via = [...this.lead, ...p];
          return { via, path: pathText(via) };
        });
        paths.set(g, known);
      }
      return known;
    };
    for (const d of decisions) {
      if (!allows(d)) continue;
      for (const g of d.grants) {
        if (!keep(g)) continue;
        for (const { via, path } of pathsFor(g)) {
          const k = `${object}\u0000${path}`;
          let e = this.byKey.get(k);
          if (!e) this.byKey.set(k, (e = { object, verbs: [], path, via }));
          if (!e.verbs.includes(d.verb)) e.verbs.push(d.verb);
        }
      }
    }
  }

  entries(): GrantEntry[] {
    const order = (v: Verb) => allVerbs.indexOf(v);
    return [...this.byKey.values()]
      .map((e) => ({ ...e, verbs: e.verbs.sort((a, b) => order(a) - order(b)) }))
      .sort((a, b) => objectOrder(a.object) - objectOrder(b.object) || cmp(a.object, b.object) || cmp(a.path, b.path));
  }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const objectOrder = (o: string) => (o === 'teams/*' ? 0 : o.startsWith('teams/') ? 1 : o === 'ownedaccesskeys/*' ? 2 : 3);
const keyStub = (group: string, spec: object): KubeObject => ({ apiVersion: `${group}/v1`, kind: 'OwnedAccessKey', metadata: {}, spec });
const notRole = (g: Grant) => g.kind !== 'role';
/** Not a role, nor a team's keys through a role: those are the rows of every key (`ownedaccesskeys/*`, `[team=*]`). */
const notThroughRole = (g: Grant) => notRole(g) && !(g.kind === 'teamKeys' && g.because.kind === 'role');

/** What `who` may do, as grant entries: on every Team, the Teams that name it, and keys by category. */
export function grantsFor(who: Identity, world: World, authz: Authorizer, lead: Step[] = []): GrantEntry[] {
  const out = new Grants(who, world, lead);
  const ask = (resource: Resource, obj: KubeObject | undefined, verbs: readonly Verb[], name?: string) => authorizeVerbs(authz, { user: who, resource, ...(name ? { name } : {}), ...(obj ? { object: obj } : {}) }, verbs);
  // Every Team: what roles give (and the open list). A create of a Team is judged without content.
  out.add('teams/*', '', ask('teams', undefined, allVerbs));
  const named = [...world.referencing(who.user, who.teams)].sort();
  for (const t of named) out.add(`teams/${t}`, t, ask('teams', world.get(t), objectVerbs, t), notRole);
  // Every key: roles (and the open list).
  out.add('ownedaccesskeys/*', '', ask('ownedaccesskeys', undefined, allVerbs));
  // Its own keys: a create is judged by the new key's content, which for the caller is itself (a
  // team key's create through a role that updates every Team is only ever asked this way).
  const own = who.user !== undefined ? { user: who.user } : who.team !== undefined ? { team: who.team } : undefined;
  if (own) out.add(who.user !== undefined ? `ownedaccesskeys[user=${who.user}]` : `ownedaccesskeys[team=${who.team}]`, who.team ?? '', ask('ownedaccesskeys', keyStub(authz.group, own), who.user !== undefined ? [...objectVerbs, 'create'] : ['create']), notRole);
  // Team keys: of every team through roles, of the Teams that name it through owner or access rules.
  const teamKeys = (g: Grant) => g.kind === 'teamKeys';
  out.add(`ownedaccesskeys[team=${anyTeam}]`, anyTeam, ask('ownedaccesskeys', keyStub(authz.group, { team: anyTeam }), objectVerbs), teamKeys);
  for (const t of named) out.add(`ownedaccesskeys[team=${t}]`, t, ask('ownedaccesskeys', keyStub(authz.group, { team: t }), objectVerbs), (g) => teamKeys(g) && notThroughRole(g));
  return out.entries();
}

/** Identities named anywhere: users, groups, teams and subjects, from Teams and keys. */
function namedIdentities(teams: Team[], keys: OwnedAccessKey[]): { users: Set<string>; groups: Set<string>; teams: Set<string>; subjects: Set<string> } {
  const users = new Set<string>();
  const groups = new Set<string>();
  const teamNames = new Set<string>();
  const subjects = new Set<string>();
  for (const t of teams) {
    teamNames.add(t.metadata.name!);
    for (const u of t.spec?.users ?? []) users.add(u);
    for (const g of t.spec?.groups ?? []) groups.add(g);
    if (t.spec?.owner?.user) users.add(t.spec.owner.user);
    if (t.spec?.owner?.team) teamNames.add(t.spec.owner.team);
    for (const r of t.spec?.access ?? []) {
      for (const u of r.users ?? []) users.add(u);
      for (const x of r.teams ?? []) teamNames.add(x);
    }
  }
  for (const k of keys) {
    const s = k.spec ?? {};
    if (s.user) users.add(s.user);
    else if (s.team) teamNames.add(s.team);
    else subjects.add(s.subject ?? '');
    for (const g of [...(s.groups ?? []), ...(s.identity?.groups ?? [])]) groups.add(g);
  }
  return { users, groups, teams: teamNames, subjects };
}

const sorted = (s: Set<string>) => [...s].sort(cmp);
const iso = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? null : new Date(ms).toISOString());

/** A key as the review lists it, and the identity it authenticates as (undefined when it authenticates as nobody). */
function keyEntry(key: OwnedAccessKey, world: World, now: Date): { entry: Omit<KeyEntry, 'rights'>; identity?: Identity | true } {
  const spec = key.spec ?? {};
  const lastUse = key.status?.lastActivity ? Date.parse(key.status.lastActivity) : undefined;
  const refusal = keyRefusal(key, now, undefined, world);
  const state: KeyEntry['state'] = !refusal ? 'active' : spec.disabled ? 'disabled' : refusal === 'access key expired' ? 'expired' : 'refused';
  const rotation = (key.status as { rotation?: { rotatedAt?: string } } | undefined)?.rotation;
  const entry = {
    name: key.metadata.name!,
    type: spec.type || defaultKeyType,
    createdAt: key.metadata.creationTimestamp ?? null,
    valueSetAt: rotation?.rotatedAt ?? null,
    lastUsedAt: iso(lastUse),
    expiresAt: iso(expiresAt(key, lastUse)),
    state,
    refusal: refusal ?? null,
    scope: hasScope(spec) ? scopeSummary(spec.scope) : null,
    groups: [...new Set([...(spec.groups ?? []), ...(spec.identity?.groups ?? [])])].sort(cmp),
  };
  if (refusal) return { entry };
  return { entry, identity: hasScope(spec) || entry.groups.length > 0 ? identityFor(spec, world, key.metadata.name!) : true };
}

/**
 * What the review reads of a key: 100,000 keys as listed (managedFields and all) held while the
 * review is computed would double its peak memory for fields it never looks at.
 */
export function reviewView(key: KubeObject): OwnedAccessKey {
  const { name, uid, creationTimestamp, deletionTimestamp, ownerReferences, annotations } = key.metadata;
  const { displayName: _d, description: _s, ...spec } = (key.spec ?? {}) as OwnedAccessKey['spec'];
  const status = (key.status ?? {}) as { lastActivity?: string; rotation?: { rotatedAt?: string } };
  return {
    apiVersion: key.apiVersion,
    kind: key.kind,
    metadata: { name, uid, creationTimestamp, ...(deletionTimestamp ? { deletionTimestamp } : {}), ...(ownerReferences ? { ownerReferences } : {}), ...(annotations ? { annotations } : {}) },
    spec,
    status: { ...(status.lastActivity ? { lastActivity: status.lastActivity } : {}), ...(status.rotation ? { rotation: { rotatedAt: status.rotation.rotatedAt } } : {}) },
  } as OwnedAccessKey;
}

const sameTeams = (a: Identity, b: Identity) => a.teams.length === b.teams.length && a.teams.every((t, i) => t === b.teams[i]);

/** The review of a world of Teams and keys. */
export function computeReview(input: ReviewInput): ReviewDocument {
  const world = teamWorldOf(input.teams);
  const authz = new Authorizer(world, input.group);
  const names = namedIdentities(input.teams, input.keys);
  const identities: IdentityEntry[] = [];
  const keysOf = new Map<string, KeyEntry[]>();
  const keyIdentities: IdentityEntry[] = [];
  /** Each owner's identity without a key's groups or scope: what a key of it is compared with. */
  const plainOf = new Map<string, Identity>();
  const base = (spec: object, name: string) => identityFor(spec, world, name);
  const memberOf = (who: Identity) =>
    who.teams.map((team) => ({ team, by: waysIn(who, team, world) }));
  const total = names.users.size + names.groups.size + names.teams.size + names.subjects.size + input.keys.length;
  let done = 0;
  const tick = () => {
    done++;
    if (input.onProgress && done % 2000 === 0) input.onProgress(done, total);
  };

  // Keys first: each under its identity, with rows of its own when its scope or groups change them.
  for (const key of input.keys) {
    tick();
    const spec = key.spec ?? {};
    const owner = spec.user ? `user:${spec.user}` : spec.team ? `team:${spec.team}` : `subject:${spec.subject ?? ''}`;
    const { entry, identity } = keyEntry(key, world, input.now);
    let rights: KeyEntry['rights'] = 'none';
    // No scope and no groups of its own: the identity of its user, team or subject, exactly (the
    // common case, decided without building it again).
    if (identity === true) rights = 'identity';
    else if (identity) {
      let plain = plainOf.get(owner);
      if (!plain) plainOf.set(owner, (plain = base(spec.user ? { user: spec.user } : spec.team ? { team: spec.team } : { subject: spec.subject ?? '' }, '')));
      if (!hasScope(identity) && sameTeams(identity, plain)) rights = 'identity';
      else {
        const lead: Step[] = hasScope(identity) ? [{ step: 'scope', key: entry.name, scope: entry.scope! }] : [];
        const grants = grantsFor(identity, world, authz, lead);
        // A key whose scope allows no management request at all may do nothing: say so, list nothing.
        if (grants.length > 0) {
          rights = 'own';
          const k: KeyEntry = { ...entry, rights };
          keyIdentities.push({ id: `key:${entry.name}`, kind: 'key', name: entry.name, memberOf: memberOf(identity), roles: [...identity.clusterRoles].sort(cmp), grants, keys: [k] });
        }
      }
    }
    const list = keysOf.get(owner) ?? [];
    list.push({ ...entry, rights });
    keysOf.set(owner, list);
  }

  const add = (kind: IdentityEntry['kind'], name: string, spec: object) => {
    tick();
    const who = base(spec, '');
    const id = `${kind}:${name}`;
    identities.push({ id, kind, name, memberOf: memberOf(who), roles: [...who.clusterRoles].sort(cmp), grants: grantsFor(who, world, authz), keys: (keysOf.get(id) ?? []).sort((a, b) => cmp(a.name, b.name)) });
  };
  for (const u of sorted(names.users)) add('user', u, { user: u });
  for (const g of sorted(names.groups)) add('group', g, { subject: '', groups: [g] });
  for (const t of sorted(names.teams)) add('team', t, { team: t });
  for (const s of sorted(names.subjects)) add('subject', s, { subject: s });
  identities.push(...keyIdentities.sort((a, b) => cmp(a.name, b.name)));
  input.onProgress?.(total, total);
  return {
    kind: reviewKind,
    version: reviewVersion,
    generatedAt: input.now.toISOString(),
    source: input.source,
    group: input.group,
    counts: { teams: input.teams.length, keys: input.keys.length, identities: identities.length, grants: identities.reduce((n, i) => n + i.grants.length, 0) },
    identities,
  };
}
