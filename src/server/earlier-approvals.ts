/**
 * Whether an earlier approval of an AccessRequest still counts towards the team's
 * requiredApprovals, asked at each approval (routes/access-request-approval.ts). It counts while
 * the key it was made with would still approve the request now: that key works, still acts for the
 * approver, its scope allows the approval, and the approver, with the groups the key has now (a
 * Login key's follow the identity provider), may approve. Judged with the groups recorded when it
 * approved, an approver whose group membership ended at the provider still counted (found at stop 56).
 */
import type { AccessRequest } from '../api/types.js';
import type { Approval } from '../api/access-request.js';
import { ApiError } from '../api/errors.js';
import type { Authorizer } from '../auth/authorize.js';
import { identityFor, type Identity } from '../auth/identity.js';
import { scopeDenial } from '../auth/scope.js';
import type { TeamIndex } from '../auth/team-index.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';

/** Reads who a stored key acts for now (auth/authenticate.ts currentIdentity). */
export interface KeysNow {
  currentIdentity(name: string): Promise<Identity | undefined>;
}

/** The keys of a request's approvals, each as it authenticates now (undefined: it would be refused). */
export type ApprovalKeys = ReadonlyMap<string, Identity | undefined>;

/**
 * Reads the keys the approvals of request `name` were made with, before the write (whose function
 * cannot wait). Nothing to read when no approval is to be counted: a break-glass request's review,
 * a request no longer Pending.
 */
export async function approvalKeys(r: ResourceRegistry, keysNow: KeysNow, name: string): Promise<ApprovalKeys> {
  const current = (await r.get(name).catch((err: unknown) => {
    if (err instanceof ApiError && err.code === 404) return undefined;
    throw err;
  })) as AccessRequest | undefined;
  if (!current || current.spec.breakGlass || (current.status?.phase ?? 'Pending') !== 'Pending') return new Map();
  // At most 64 (the schema's bound on approvals), read together.
  const names = [...new Set((current.status?.approvals ?? []).flatMap((a) => (a.key === undefined ? [] : [a.key])))];
  return new Map(await Promise.all(names.map(async (key) => [key, await keysNow.currentIdentity(key)] as const)));
}

/** Whether the earlier approval `a` of `req` still counts (see above), the keys read by approvalKeys. */
export function stillApproves(a: Approval, req: AccessRequest, keys: ApprovalKeys, authz: Authorizer, teams: TeamIndex): boolean {
  const judged = (groups: readonly string[]) => authz.allowed(identityFor({ user: a.user, groups: [...groups] }, teams, ''), 'update', 'accessrequests', req, 'approval');
  // Made by impersonation, or recorded before keys were: by the approver's name alone.
  if (a.key === undefined) return judged([]);
  // Recorded after the keys were read (an approval at the same moment): its groups are its key's of a moment ago.
  if (!keys.has(a.key)) return judged(a.groups ?? []);
  const now = keys.get(a.key);
  if (now?.name !== a.user) return false;
  if (scopeDenial(now.scope, { verb: 'update', group: authz.group, resource: 'accessrequests', subresource: 'approval', ...(req.metadata.name ? { name: req.metadata.name } : {}) }) !== undefined) return false;
  return judged(now.groups);
}
