/**
 * Impersonation as kube-apiserver does it: a caller allowed to (impersonation-rights.ts) sends
 * Impersonate-User (and -Group, -Uid, -Extra-*) and the request is then authorized, admitted and
 * answered as that user would be. Each attribute asked is authorized in kube's order (user, groups,
 * uid, extras) and refused in kube's words; then the no-escalation rule (escalation.ts): one gains
 * through impersonation nothing one could not grant oneself. The impersonated identity keeps the
 * impersonator's key (its scope, expiry, sign-in, previous value), which only narrows, and says who
 * really asked, for the audit trail. docs/auth.md, "Impersonation".
 */
import { ApiError, badRequest } from '../api/errors.js';
import type { Authorizer } from './authorize.js';
import { impersonationEscalation } from './escalation.js';
import type { TeamWorld } from './grants.js';
import { identityFor, type Identity } from './identity.js';
import { standingOf } from './temporary-access.js';
import { impersonationDenial, impersonationGroups, type ImpersonatedAttribute } from './impersonation-rights.js';

/** What the Impersonate-* headers ask for. */
export interface ImpersonationAsked {
  user?: string;
  groups: string[];
  uid?: string;
  /** Impersonate-Extra-<key>, by key (lower-case, unescaped as kube does). */
  extra: Record<string, string[]>;
}

/** kube's 403 for one attribute the caller may not impersonate. */
function forbidden(who: Identity, a: ImpersonatedAttribute, why: string | undefined): ApiError {
  const group = impersonationGroups[a.resource];
  const target = `${group ? `${a.resource}.${group}` : a.resource} "${a.name ?? ''}"`;
  const what = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const message = `${target} is forbidden: User "${who.name}" cannot impersonate resource "${what}" in API group "${group}" at the cluster scope${why ? `: ${why}` : ''}`;
  return new ApiError(403, 'Forbidden', message, { name: a.name ?? '', group, kind: a.resource });
}

/** Every attribute asked, in the order kube authorizes them. */
function attributesOf(asked: ImpersonationAsked & { user: string }): ImpersonatedAttribute[] {
  return [
    { resource: 'users', name: asked.user },
    ...asked.groups.map((name): ImpersonatedAttribute => ({ resource: 'groups', name })),
    ...(asked.uid !== undefined ? [{ resource: 'uids', name: asked.uid } as ImpersonatedAttribute] : []),
    ...Object.entries(asked.extra).flatMap(([key, values]) => values.map((name): ImpersonatedAttribute => ({ resource: 'userextras', subresource: key, name }))),
  ];
}

/** The identity `who` acts as for this request, or the 400 / 403 that refuses it. */
export function impersonate(who: Identity, asked: ImpersonationAsked, authz: Authorizer, world: TeamWorld): Identity {
  const { user } = asked;
  if (user === undefined) throw badRequest('Impersonate-Group, Impersonate-Uid and Impersonate-Extra-* require Impersonate-User');
  // A request already acting for someone else does not pass it on (kube reads the headers once).
  if (who.impersonation) throw badRequest('a request may impersonate only once');
  const asking = { ...asked, user };
  for (const a of attributesOf(asking)) {
    const denied = impersonationDenial(who, a);
    if (denied !== undefined) throw forbidden(who, a, denied || undefined);
  }
  const gains = impersonationEscalation(who, authz, world, user, asked.groups);
  if (gains) throw forbidden(who, { resource: 'users', name: user }, gains);
  // Allowed only through temporary access: the request may read and act as the user, but what it
  // writes that grants is judged by the impersonator's standing rights, which do not cover that
  // user's: none (a temporary admin impersonating a standing one added itself to a team, found by a review).
  const beyondStanding = who.standing !== undefined && impersonationEscalation(standingOf(who), authz, world, user, asked.groups) !== undefined;
  const as = { ...identityFor({ user, groups: asked.groups }, world, who.keyName), ...(beyondStanding ? { standing: { teams: [], clusterRoles: new Set<string>() } } : {}) };
  const extra = Object.keys(asked.extra).length > 0 ? { extra: asked.extra } : {};
  return {
    ...as,
    ...(who.scope ? { scope: who.scope } : {}),
    ...(who.expiresAt !== undefined ? { expiresAt: who.expiresAt } : {}),
    ...(who.signIn ? { signIn: who.signIn } : {}),
    ...(who.previousValue ? { previousValue: who.previousValue } : {}),
    impersonation: { by: { name: who.name, keyName: who.keyName, groups: who.groups, ...(who.job ? { job: who.job } : {}) }, ...(asked.uid !== undefined ? { uid: asked.uid } : {}), ...extra },
  };
}
