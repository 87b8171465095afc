/**
 * Who may do what: management roles from the caller's teams, a Team's owner and access rules,
 * users' own keys, and team keys for whoever may update the team.
 */
import { ApiError } from '../../src/api/errors.js';
import type { KubeObject, OwnedAccessKeySpec, Team } from '../../src/api/types.js';
import { grantsAnything } from '../../src/auth/grants.js';
import type { Identity } from '../../src/auth/identity.js';
import { isAdminFor, roleVerbs, verbs as allVerbs, type Resource, type Verb } from '../../src/auth/roles.js';
import type { TeamIndex } from '../../src/auth/team-index.js';

/** The filter of a caller who sees every object: a LIST for it needs to look inside none of them. */
export const seesEverything = (_obj: KubeObject): boolean => true;

export class Authorizer {
  constructor(
    private readonly teams: TeamIndex,
    readonly group: string,
  ) {}

  /** The verbs `who` holds on one Team, from roles, ownership and access rules. */
  teamVerbs(who: Identity, team: Team | undefined, subresource?: string): Set<Verb> {
    const held = roleVerbs(who.clusterRoles, 'teams');
    // A terminating team's owner and access rules grant nothing; roles on every team still hold.
    if (!grantsAnything(team)) return held;
    const owner = team.spec?.owner;
    if (owner && ((owner.user && owner.user === who.user) || (owner.team && who.teams.includes(owner.team)))) return new Set(allVerbs);
    for (const rule of team.spec?.access ?? []) {
      const applies = (who.user !== undefined && (rule.users ?? []).includes(who.user)) || (rule.teams ?? []).some((t) => who.teams.includes(t));
      if (!applies) continue;
      if (subresource && !(rule.subresources ?? []).some((s) => s === subresource || s === '*')) continue;
      for (const v of rule.verbs ?? []) {
        if (v === '*') return new Set(allVerbs);
        if ((allVerbs as readonly string[]).includes(v)) held.add(v as Verb);
      }
    }
    return held;
  }

  /** The verbs `who` holds on one access key. */
  keyVerbs(who: Identity, key: KubeObject | undefined): Set<Verb> {
    if (isAdminFor(who.clusterRoles, 'ownedaccesskeys')) return new Set(allVerbs);
    const spec = (key?.spec ?? {}) as OwnedAccessKeySpec;
    if (!key) return new Set<Verb>(['list', 'watch']); // lists are filtered to what the caller may see
    if (spec.user && spec.user === who.user) return new Set(allVerbs);
    if (spec.team && this.teamVerbs(who, this.teams.get(spec.team)).has('update')) return new Set(allVerbs);
    return new Set();
  }

  verbsOn(who: Identity, resource: Resource, obj: KubeObject | undefined, subresource?: string): Set<Verb> {
    if (resource === 'teams') {
      const held = this.teamVerbs(who, obj as Team | undefined, subresource);
      // Listing teams is open to all; the list shows only the teams the caller may get.
      if (!obj) held.add('list').add('watch');
      return held;
    }
    return this.keyVerbs(who, obj);
  }

  allowed(who: Identity, verb: Verb, resource: Resource, obj?: KubeObject, subresource?: string): boolean {
    return this.verbsOn(who, resource, obj, subresource).has(verb);
  }

  /** Filters lists and watches: the objects the caller may get. */
  visible(who: Identity, resource: Resource): (obj: KubeObject) => boolean {
    if (isAdminFor(who.clusterRoles, resource) || (resource === 'teams' && roleVerbs(who.clusterRoles, 'teams').has('get'))) return seesEverything;
    return (obj) => this.verbsOn(who, resource, obj).has('get');
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
    // A team key is visible to whoever may update its team: that is a team's content, not the key's.
    if (resource === 'ownedaccesskeys') basis.keysOf = [...this.teams.referencing(who.user, who.teams)].filter((t) => this.teamVerbs(who, this.teams.get(t)).has('update')).sort().map(at);
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
