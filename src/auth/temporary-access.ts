/**
 * Temporary team membership from Active AccessRequests: added to an identity on every request,
 * never written into the Team, and judged against `now` each time, so nothing outlives expiresAt
 * on any replica (no sweep, no sync needed; the expiry sweep only records the phase).
 */
import { activeUntil, bindingOf, madeOf, type RequestBinding } from '../api/access-request.js';
import type { AccessRequest, KubeObject } from '../api/types.js';
import { grantsAnything, type TeamWorld } from './grants.js';
import { valueSetByAnnotation } from '../api/key-types.js';
import type { Identity } from './identity.js';

/** One Active request behind an identity's membership. */
export interface TemporaryGrant {
  request: string;
  team: string;
  /** The subset of the team's roles granted; absent: the whole membership. */
  roles?: string[];
  /** Epoch ms the grant ends. */
  expiresAt: number;
  /** Active without approval: every request made with it carries a Warning (server/auth/endpoint-auth.ts). */
  breakGlass?: true;
  /** The team the request was asked of: its grant holds there only, not on a team re-created under the name (madeOf). */
  binding: RequestBinding;
}

/** Where a user's Active AccessRequests are found: the registry's `activeRequester` index. */
export interface ActiveRequests {
  byField(index: 'activeRequester', user: string): Promise<KubeObject[]>;
}

/** The grants of `user`'s Active AccessRequests at `now`: a lookup, not a list of every request. */
export async function grantsOfUser(requests: ActiveRequests, user: string, now: Date): Promise<TemporaryGrant[]> {
  return activeGrants(await requests.byField('activeRequester', user), user, now);
}

/** The grants of the Active requests among `requests` for `user` at `now`. */
export function activeGrants(requests: readonly KubeObject[], user: string | undefined, now: Date): TemporaryGrant[] {
  if (user === undefined) return [];
  const out: TemporaryGrant[] = [];
  for (const obj of requests) {
    const req = obj as AccessRequest;
    if (req.spec?.user !== user) continue;
    const end = activeUntil(req, now);
    if (end === undefined) continue;
    out.push({ request: req.metadata.name!, team: req.spec.team, ...(req.spec.roles ? { roles: [...req.spec.roles] } : {}), expiresAt: end, ...(req.spec.breakGlass ? { breakGlass: true as const } : {}), binding: bindingOf(req) });
  }
  return out;
}

/**
 * The identity with each grant's membership: the team itself (its access rules and ownership
 * naming it) and all its roles, or, for a roles subset, only those of the team's roles.
 */
export function withTemporaryAccess(identity: Identity, grants: readonly TemporaryGrant[], world: Pick<TeamWorld, 'get'>): Identity {
  if (grants.length === 0) return identity;
  const teams = new Set(identity.teams);
  const roles = new Set(identity.clusterRoles);
  const kept: TemporaryGrant[] = [];
  for (const g of grants) {
    const team = world.get(g.team);
    if (!grantsAnything(team) || !madeOf(g.binding, team)) continue;
    kept.push(g);
    const teamRoles = (team.spec?.clusterRoles ?? []).map((r) => r.name);
    if (g.roles === undefined) teams.add(g.team);
    for (const r of teamRoles) if (g.roles === undefined || g.roles.includes(r)) roles.add(r);
  }
  if (kept.length === 0) return identity;
  return { ...identity, teams: [...teams].sort(), clusterRoles: roles, temporary: kept, standing: { teams: identity.teams, clusterRoles: identity.clusterRoles } };
}

/**
 * The identity without its temporary access: what a write may hand on is judged by it. A write that
 * grants (a team's access rule or member, a key, a rule minting keys, an approval) outlives the
 * request behind the writer's temporary membership; judged by the full identity, a member for an
 * hour could write itself a standing rule, mint a team key that never expires, or approve others'
 * access past its own end (found by a review).
 */
export function standingOf(who: Identity): Identity {
  if (!who.standing) return who;
  const { temporary: _temporary, standing, ...rest } = who;
  return { ...rest, teams: standing.teams, clusterRoles: standing.clusterRoles };
}

/** A refusal judged by the standing identity, saying so when the temporary access would have allowed it. */
export const standingRefusal = (who: Identity, refusal: string | undefined): string | undefined =>
  refusal && who.standing ? `${refusal} (temporary access from an AccessRequest does not count towards what outlives it)` : refusal;

/**
 * The grants a key of `user` carries: all of them on a key whose value the user set, an
 * administrator set (`admin:`: it could grant anything), or one written before setters were
 * recorded; none on any other. An accesskeys-admin who made a user a key before the user went on
 * call held the key to every later approval of the user's (found by a review): "no key does more
 * than its writer holds", judged when the grant is used, not only when the key is written.
 */
export function grantsCarried(grants: readonly TemporaryGrant[], key: Pick<KubeObject, 'metadata'>, user: string): readonly TemporaryGrant[] {
  const setter = key.metadata.annotations?.[valueSetByAnnotation];
  if (grants.length === 0 || setter === undefined || setter === `user:${user}` || setter.startsWith('admin:')) return grants;
  return [];
}
