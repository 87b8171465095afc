/**
 * Who may do what: management roles from the caller's teams, a Team's owner and access rules,
 * users' own keys, and team keys for whoever may update the team.
 */
import { ApiError } from '../api/errors.js';
import type { IndexLookup, Matcher } from '../api/selectors.js';
import { bindingOf, isApprover, madeOf } from '../api/access-request.js';
import type { AccessRequest, AccessRequestSpec, KubeObject, OwnedAccessKeySpec, Team } from '../api/types.js';
import { grantsAnything, listed, principalTokens } from './grants.js';
import type { Identity } from './identity.js';
import { isAdminFor, managementRole, roleVerbs, verbs as allVerbs, type Resource, type Verb } from './roles.js';
import type { TeamWorld } from './grants.js';
import { scopeDenial } from './scope.js';

/**
 * Why an identity holds verbs on an object: a cluster role it holds (through its teams), the
 * Team's owner or one of its access rules (naming the user, or a team it belongs to), its own keys,
 * a team's keys for whoever may update the team (with the grant giving that update), or a list
 * that is open to all and shows only what the caller may get.
 */
export type Grant =
  | { kind: 'role'; role: string }
  | { kind: 'owner'; user: string }
  | { kind: 'owner'; team: string }
  | { kind: 'access'; rule: number; user: string }
  | { kind: 'access'; rule: number; team: string }
  | { kind: 'listed' }
  | { kind: 'ownKeys'; user: string }
  | { kind: 'teamKeys'; team: string; because: Grant }
  /** An AccessRequest's own user: may read it and withdraw it. */
  | { kind: 'requester'; user: string }
  /** One of the approvers of the request's team (its owner, or spec.accessRequests.approvers). */
  | { kind: 'approver'; team: string }
  /** A request for someone else, by whoever may update the team (the right to add them to it). */
  | { kind: 'teamAdder'; team: string; because: Grant };

/** Receives one grant and its verbs; returns true when the caller has heard enough. */
export type Emit = (verbs: readonly Verb[], grant: Grant) => boolean;

/** The verbs of every grant, stopping once all are held (the request path needs no more). */
function collect(walk: (emit: Emit) => void): Set<Verb> {
  const held = new Set<Verb>();
  walk((vs) => {
    for (const v of vs) held.add(v);
    return held.size === allVerbs.length;
  });
  return held;
}

/** The filter of a caller who sees every object: a LIST for it needs to look inside none of them. */
export const seesEverything = (_obj: KubeObject): boolean => true;

/** Whether one of `who`'s roles grants any verb on `resource` (then it may reach any object of it). */
const roleOn = (who: Identity, resource: Resource) => [...who.clusterRoles].some((role) => (managementRole(role)?.[resource] ?? []).length > 0);

export class Authorizer {
  constructor(
    private readonly teams: Pick<TeamWorld, 'get' | 'referencing' | 'approving'>,
    readonly group: string,
  ) {}

  /**
   * Every grant `who` holds on one Team, each with the verbs it gives, passed to `emit` until it
   * returns true (enough). The one statement of the rules: teamVerbs asks it for verbs, the access
   * review for the reasons (src/review), so an access review's path is the decision's own.
   */
  teamGrants(who: Identity, team: Team | undefined, subresource: string | undefined, emit: Emit): void {
    for (const role of who.clusterRoles) {
      const vs = managementRole(role)?.teams;
      if (vs && vs.length > 0 && emit(vs, { kind: 'role', role })) return;
    }
    // A terminating team's owner and access rules grant nothing; roles on every team still hold.
    if (!grantsAnything(team)) return;
    const owner = team.spec?.owner;
    if (owner?.user && owner.user === who.user && emit(allVerbs, { kind: 'owner', user: owner.user })) return;
    if (owner?.team && who.teams.includes(owner.team) && emit(allVerbs, { kind: 'owner', team: owner.team })) return;
    // Lists read as lists only (grants.ts listed): a Team stored past the API with one string where
    // a list goes, or a null rule, grants nothing through it (a string would match by substring).
    listed(team.spec?.access).some((item, index) => {
      if (typeof item !== 'object' || item === null) return false;
      const rule = item as { subresources?: unknown; verbs?: unknown; users?: unknown; teams?: unknown };
      if (subresource && !listed(rule.subresources).some((s) => s === subresource || s === '*')) return false;
      const verbs = listed(rule.verbs);
      const vs = verbs.includes('*') ? allVerbs : allVerbs.filter((v) => verbs.includes(v));
      if (vs.length === 0) return false;
      if (who.user !== undefined && listed(rule.users).includes(who.user) && emit(vs, { kind: 'access', rule: index, user: who.user })) return true;
      return [...new Set(listed(rule.teams))].some((t) => typeof t === 'string' && who.teams.includes(t) && emit(vs, { kind: 'access', rule: index, team: t }));
    });
  }

  /** The verbs `who` holds on one Team, from roles, ownership and access rules. */
  teamVerbs(who: Identity, team: Team | undefined, subresource?: string): Set<Verb> {
    return collect((emit) => this.teamGrants(who, team, subresource, emit));
  }

  /**
   * Every grant `who` holds on one access key (see teamGrants), or on one FederatedCredential: a
   * rule acting for a user or team is held as a key of theirs would be (it mints such keys).
   */
  keyGrants(who: Identity, key: KubeObject | undefined, emit: Emit, resource: Exclude<Resource, 'teams'> = 'ownedaccesskeys'): void {
    for (const role of who.clusterRoles) {
      const vs = managementRole(role)?.[resource];
      if (vs && vs.length > 0 && emit(vs, { kind: 'role', role })) return;
    }
    // Lists are filtered to what the caller may see.
    if (!key) return void emit(['list', 'watch'], { kind: 'listed' });
    const spec = (key.spec ?? {}) as OwnedAccessKeySpec;
    if (spec.user && spec.user === who.user && emit(allVerbs, { kind: 'ownKeys', user: spec.user })) return;
    if (spec.team) {
      const team = spec.team;
      this.teamGrants(who, this.teams.get(team), undefined, (vs, because) => vs.includes('update') && emit(allVerbs, { kind: 'teamKeys', team, because }));
    }
  }

  /** The verbs `who` holds on one access key. */
  keyVerbs(who: Identity, key: KubeObject | undefined): Set<Verb> {
    return collect((emit) => this.keyGrants(who, key, emit));
  }

  /**
   * Every grant on one AccessRequest: anyone may ask for themselves (a list shows what the caller
   * may get); its user reads and withdraws it; whoever may update the team may ask for someone
   * else; the team's approvers read, approve (the approval subresource) and delete it, but never
   * approve a request of their own.
   */
  requestGrants(who: Identity, req: KubeObject | undefined, subresource: string | undefined, emit: Emit): void {
    for (const role of who.clusterRoles) {
      const vs = managementRole(role)?.accessrequests;
      if (vs && vs.length > 0 && emit(vs, { kind: 'role', role })) return;
    }
    if (!req) return void emit(['create', 'list', 'watch'], { kind: 'listed' });
    const spec = (req.spec ?? {}) as Partial<AccessRequestSpec>;
    const own = spec.user !== undefined && spec.user === who.user;
    if (subresource === undefined && own && emit(['create', 'get', 'list', 'watch', 'delete'], { kind: 'requester', user: spec.user! })) return;
    const team = spec.team === undefined ? undefined : this.teams.get(spec.team);
    // The team holding the name now must be the one a stored request was asked of: the owner or an
    // approver of a team re-created under the name neither reads, reviews nor deletes the requests
    // of the one before (a break-glass use owing its review among them). A request being created is
    // judged with its creation time set and the binding the client sent, if any (the server then
    // binds it to the team as it is: request-binding.ts); without a creation time it is a body not
    // yet stored, judged by the team as it is.
    const stored = req.metadata.creationTimestamp !== undefined;
    if (!team || !grantsAnything(team) || (stored && !madeOf(bindingOf(req as AccessRequest), team))) return;
    // Asking in another's name rests on `update` of the team (adding a member): a key whose scope
    // does not allow that update asks only for its own user (found by a review), as a scoped key
    // writes keys only within its scope.
    const mayUpdateTeam = scopeDenial(who.scope, { verb: 'update', group: this.group, resource: 'teams', name: spec.team! }) === undefined;
    if (subresource === undefined && !own && mayUpdateTeam) this.teamGrants(who, team, undefined, (vs, because) => vs.includes('update') && emit(['create'], { kind: 'teamAdder', team: spec.team!, because }));
    if (isApprover(team, who.user, who.teams)) emit(own ? ['get', 'list', 'watch', 'delete'] : ['get', 'list', 'watch', 'delete', 'update'], { kind: 'approver', team: spec.team! });
  }

  /** Every grant on an object of `resource` (or, without one, on all of them), as teamGrants. */
  grantsOn(who: Identity, resource: Resource, obj: KubeObject | undefined, subresource: string | undefined, emit: Emit): void {
    if (resource === 'accessrequests') return this.requestGrants(who, obj, subresource, emit);
    if (resource !== 'teams') return this.keyGrants(who, obj, emit, resource);
    let done = false;
    this.teamGrants(who, obj as Team | undefined, subresource, (vs, g) => (done = emit(vs, g)));
    // Listing teams is open to all; the list shows only the teams the caller may get.
    if (!obj && !done) emit(['list', 'watch'], { kind: 'listed' });
  }

  /** Every grant on an object, with its verbs: why `allowed` says what it says. */
  explain(who: Identity, resource: Resource, obj: KubeObject | undefined, subresource?: string): { verbs: readonly Verb[]; grant: Grant }[] {
    const out: { verbs: readonly Verb[]; grant: Grant }[] = [];
    this.grantsOn(who, resource, obj, subresource, (verbs, grant) => {
      out.push({ verbs, grant });
      return false;
    });
    return out;
  }

  verbsOn(who: Identity, resource: Resource, obj: KubeObject | undefined, subresource?: string): Set<Verb> {
    return collect((emit) => this.grantsOn(who, resource, obj, subresource, emit));
  }

  allowed(who: Identity, verb: Verb, resource: Resource, obj?: KubeObject, subresource?: string): boolean {
    return this.verbsOn(who, resource, obj, subresource).has(verb);
  }

  /** Filters lists and watches: the objects the caller may get. */
  visible(who: Identity, resource: Resource): Matcher {
    if (isAdminFor(who.clusterRoles, resource) || (resource === 'teams' && roleVerbs(who.clusterRoles, 'teams').has('get'))) return seesEverything;
    const visible = (obj: KubeObject) => this.verbsOn(who, resource, obj).has('get');
    // Asked only by a list, when it reads (a GET's check never needs it).
    if (resource === 'ownedaccesskeys' || resource === 'federatedcredentials') return Object.assign(visible, { within: () => this.keysWithin(who, resource) });
    if (resource === 'teams') return Object.assign(visible, { within: () => this.teamsWithin(who) });
    if (resource === 'accessrequests') return Object.assign(visible, { within: () => this.requestsWithin(who) });
    return visible;
  }

  /**
   * Where every key `who` may get is (keyGrants without a role): its own keys, by the `holder`
   * index (a key with spec.user holds it there), and the keys of the teams it may update, by the
   * `team` index; those teams reference the user or one of its teams (owner or access rule), as
   * readBasis reads them. FederatedCredentials alike, by `credentialFor` (the user, `team:<name>`).
   * Undefined when a role grants anything on the kind or on teams: it may reach any of them, and
   * the list reads the kind. test/auth/visible-within.test.ts holds it to the filter.
   */
  private keysWithin(who: Identity, resource: 'ownedaccesskeys' | 'federatedcredentials'): IndexLookup[] | undefined {
    if (roleOn(who, resource) || roleOn(who, 'teams')) return undefined;
    const keys = resource === 'ownedaccesskeys';
    const within: IndexLookup[] = who.user ? [{ index: keys ? 'holder' : 'credentialFor', value: who.user }] : [];
    for (const team of this.keysOfTeams(who)) within.push(keys ? { index: 'team', value: team } : { index: 'credentialFor', value: `team:${team}` });
    return within;
  }

  /**
   * The teams whose keys and FederatedCredentials `who` reads without a role: those it may update,
   * found among the teams that reference the user or one of its teams (owner or access rule).
   * keysWithin looks them up; readBasis holds an open watch to them.
   */
  private keysOfTeams(who: Identity): string[] {
    return [...this.teams.referencing(who.user, who.teams)].filter((t) => this.teamVerbs(who, this.teams.get(t)).has('update'));
  }

  /**
   * Where every AccessRequest `who` may get is (requestGrants without a role): its own, by the
   * `requester` index, and those of the teams whose requests it approves, by the `requestTeam` index.
   * Undefined when a role grants anything on AccessRequests, or the team world cannot say whom a
   * user approves for: the list reads the kind. Requests are kept after they end (a record of who
   * had access), so without this a person's list read every request ever made.
   */
  private requestsWithin(who: Identity): IndexLookup[] | undefined {
    if (roleOn(who, 'accessrequests') || !this.teams.approving) return undefined;
    if (who.user === undefined) return [];
    // The requester index holds no empty name: a caller named '' reads the kind.
    if (who.user === '') return undefined;
    const within: IndexLookup[] = [{ index: 'requester', value: who.user }];
    for (const team of this.teams.approving(who.user, who.teams)) within.push({ index: 'requestTeam', value: team });
    return within;
  }

  /**
   * Where every Team `who` may get is: the teams whose owner or access rules name the user or one
   * of its teams, by the `references` index (the team index's own tokens). No role matters here: one
   * that grants get on teams makes visible() see everything, and no other grants get.
   */
  private teamsWithin(who: Identity): IndexLookup[] {
    return principalTokens(who.user, who.teams).map((value) => ({ index: 'references', value }));
  }

  /**
   * What, besides each object itself, decides which objects of `resource` `who` may get: two
   * identities with the same basis read the same objects. An open watch compares it with the one it
   * began with; each object's own changes arrive as its events, but a change of this arrives nowhere.
   */
  readBasis(who: Identity, resource: Resource): string {
    // Each team with its resourceVersion: a user taken out of a team and put back between two checks
    // finds the same names, but could not read at the revisions in between (events filtered with
    // the rights the watch began with); any change to a team the basis rests on ends the watch.
    const at = (t: string) => `${t}@${this.teams.get(t)?.metadata.resourceVersion ?? ''}`;
    const basis: Record<string, unknown> = { user: who.user ?? null, teams: [...who.teams].sort().map(at), roles: [...who.clusterRoles].sort() };
    // A team key (or rule) is visible to whoever may update its team: that is a team's content,
    // not the key's. Not an AccessRequest's: updating its team lets one ask for others, not read.
    if (resource === 'ownedaccesskeys' || resource === 'federatedcredentials') basis.keysOf = this.keysOfTeams(who).sort().map(at);
    // An AccessRequest is visible to its team's approvers, who need not update the team: a user
    // named in accessRequests.approvers, or taken out of them, reads other requests from then on.
    if (resource === 'accessrequests' && who.user !== undefined && this.teams.approving) basis.approves = [...this.teams.approving(who.user, who.teams)].sort().map(at);
    return JSON.stringify(basis);
  }

  /** A 403 in kube-apiserver's words, with what was missing. */
  forbidden(who: Identity, verb: Verb, resource: Resource, name?: string, subresource?: string, why?: string): ApiError {
    const target = name ? `${resource}.${this.group} "${name}"` : `${resource}.${this.group}`;
    const what = subresource ? `${resource}/${subresource}` : resource;
    const message = `${target} is forbidden: User "${who.name}" cannot ${verb} resource "${what}" in API group "${this.group}" at the cluster scope${why ? `: ${why}` : ''}`;
    return new ApiError(403, 'Forbidden', message, { ...(name ? { name } : {}), group: this.group, kind: resource });
  }
}
