/** Who a request acts for: derived from the access key that authenticated it. */
import type { OwnedAccessKeySpec } from '../api/types.js';
import { grantsAnything, type TeamWorld } from './grants.js';

export interface Identity {
  /** How messages name the caller: the user, `team:<name>`, or the subject. */
  name: string;
  user?: string;
  team?: string;
  subject?: string;
  /** The key's spec.groups and its identity's groups. */
  groups: string[];
  /** Teams the caller belongs to: by spec.users, by a group, or the key's own team. */
  teams: string[];
  /** Every cluster role those teams grant (management roles among them decide API access). */
  clusterRoles: ReadonlySet<string>;
  /** The key's scope; it only ever narrows what the identity may do. */
  scope?: OwnedAccessKeySpec['scope'];
  keyName: string;
  /**
   * The Login key this key is, or is tied to by the server (src/registry/keys.ts): keys this
   * identity creates are tied to it, and end with it.
   */
  signIn?: { name: string; uid: string };
  /** When the key stops working (epoch ms); absent for a key that never expires. */
  expiresAt?: number;
  /**
   * Set when the request was authenticated by the key's previous value (a rotation's overlap):
   * such a request may not write access keys (server/auth/guard.ts), and its writes are marked so
   * in the audit trail.
   */
  previousValue?: { rotatedAt: string };
  /** Active AccessRequests behind some of `teams` and `clusterRoles` (auth/temporary-access.ts). */
  temporary?: readonly { request: string; team: string; roles?: string[]; expiresAt: number; breakGlass?: true }[];
  /** With `temporary`: the teams and roles without it, what the escalation checks judge by (standingOf). */
  standing?: { teams: string[]; clusterRoles: ReadonlySet<string> };
  /**
   * Set when the request impersonates this identity (Impersonate-* headers, auth/impersonation.ts):
   * who really sent it, and the uid and extra it asked for, which the audit trail records. The key's
   * scope, expiry, sign-in and previous value above stay the impersonator's: they only narrow.
   */
  impersonation?: { by: Pick<Identity, 'name' | 'keyName' | 'groups' | 'job'>; uid?: string; extra?: Record<string, string[]> };
  /** The CI job a Federated key was minted for (src/federation): requests are attributed to it. */
  job?: string;
  /** Who set the value of the key that authenticated (api/key-types.ts valueSetByAnnotation); absent on keys written before it was recorded. */
  valueSetBy?: string;
}

/** The fields of the key that say whom it acts for. */
export function subjectOf(spec: OwnedAccessKeySpec): Pick<Identity, 'name' | 'user' | 'team' | 'subject'> {
  if (spec.user) return { name: spec.user, user: spec.user };
  if (spec.team) return { name: `team:${spec.team}`, team: spec.team };
  return { name: spec.subject ?? '', subject: spec.subject ?? '' };
}

/**
 * Who a key with this spec acts for in a world of teams: its subject, its groups (its own and its
 * identity's), the teams it belongs to and the roles they grant. Authentication builds every
 * request's identity with it; the access review builds the identities it reviews with it too.
 */
export function identityFor(spec: OwnedAccessKeySpec, world: Pick<TeamWorld, 'get' | 'teamsOf'>, keyName: string): Identity {
  const subject = subjectOf(spec);
  const groups = [...new Set([...(spec.groups ?? []), ...(spec.identity?.groups ?? [])])];
  const teams = subject.team ? [subject.team] : world.teamsOf(subject.user, groups);
  const clusterRoles = new Set<string>();
  for (const t of teams) {
    const team = world.get(t);
    // A terminating team grants no role (a team key of one is refused before this anyway).
    if (grantsAnything(team)) for (const r of team.spec?.clusterRoles ?? []) clusterRoles.add(r.name);
  }
  const identity: Identity = { ...subject, groups, teams, clusterRoles, keyName };
  if (spec.scope) identity.scope = spec.scope;
  return identity;
}

/**
 * How a key's value setter is recorded (api/key-types.ts valueSetByAnnotation). `admin:<name>` for a
 * writer holding management-admin by standing rights (it could grant anything, so a user's temporary
 * access may ride on what it sets); `user:<name>` for a user acting as itself with a key the user
 * set (or an admin did, or one written before setters were recorded); `indirect:<name> via
 * <setter>` for a user acting with a key someone else set, so a key cannot launder its setter by
 * setting a value for its own user (found by a review; no user name makes `user:` of that prefix);
 * else what wrote it (`impersonator:`, `job:`, `team:`, `subject:`). `standingRoles`: the writer's
 * roles without temporary access (temporary-access.ts standingOf).
 */
export function valueSetterOf(who: Identity, standingRoles: ReadonlySet<string>): string {
  if (who.impersonation) return `impersonator:${who.impersonation.by.name}`;
  if (who.job !== undefined) return `job:${who.job}`;
  if (standingRoles.has('management-admin')) return `admin:${who.name}`;
  if (who.user !== undefined) {
    const own = who.valueSetBy;
    if (own === undefined || own === `user:${who.user}` || own.startsWith('admin:')) return `user:${who.user}`;
    // Whoever set the writing key may know the value it sets: recorded so that it never reads as
    // anyone's own (passed on bare, `user:keymaster` made a key of keymaster's that another knew:
    // found by a review), and no longer than two names (the first setter of a chain kept).
    return `indirect:${who.user} via ${own.startsWith('indirect:') ? own.slice('indirect:'.length).split(' via ').pop()! : own}`;
  }
  if (who.team !== undefined) return `team:${who.team}`;
  return `subject:${who.subject ?? who.name}`;
}
