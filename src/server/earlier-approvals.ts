/**
 * Whether an earlier approval of an AccessRequest still counts towards the team's
 * requiredApprovals, asked at each approval (routes/access-request-approval.ts). Judged with the
 * groups recorded when it approved, an approver whose group membership ended at the identity
 * provider still counted (found at stop 56). It is judged now as the approver is now:
 * - by the key it was made with, when that key works and still acts for the approver: as that key
 *   would approve now (its groups now, a Login key's following the provider, and its scope);
 * - not at all when that key was disabled (a leak report, an administrator: what it did is suspect),
 *   or acts for someone else now;
 * - when that key has ended (deleted, as signing in again deletes the previous Login key; expired;
 *   its sign-in ended), by the approver's newest working Login key, else by its name alone;
 * - an approval recorded without a key (made by impersonation, or before keys were recorded) by
 *   its approver's name alone.
 */
import type { AccessRequest } from '../api/types.js';
import type { Approval } from '../api/access-request.js';
import { unlessNotFound } from '../api/errors.js';
import type { KeyNow } from '../auth/authenticate.js';
import type { Authorizer } from '../auth/authorize.js';
import { identityFor, type Identity } from '../auth/identity.js';
import { scopeDenial } from '../auth/scope.js';
import type { TeamIndex } from '../auth/team-index.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';

/** Reads keys and sign-ins as they authenticate now (auth/authenticate.ts). */
export interface KeysNow {
  currentIdentity(name: string): Promise<KeyNow>;
  currentSignIn(user: string): Promise<Identity | undefined>;
}

/** What approversNow read: each approval's key now, and the sign-in now of approvers whose key ended. */
export interface ApproversNow {
  keys: ReadonlyMap<string, KeyNow>;
  signIns: ReadonlyMap<string, Identity | undefined>;
}

export const nobodyRead: ApproversNow = { keys: new Map(), signIns: new Map() };

/**
 * Reads what the approvals of request `name` are judged by, before the write (whose function cannot
 * wait). Nothing to read when no approval is to be counted: a break-glass request's review, a
 * request no longer Pending. At most 64 approvals (the schema's bound), read together.
 */
export async function approversNow(r: ResourceRegistry, keysNow: KeysNow, name: string): Promise<ApproversNow> {
  const current = (await r.get(name).catch(unlessNotFound)) as AccessRequest | undefined;
  if (!current || current.spec.breakGlass || (current.status?.phase ?? 'Pending') !== 'Pending') return nobodyRead;
  const approvals = (current.status?.approvals ?? []).filter((a) => a.key !== undefined);
  const keys = new Map(await Promise.all([...new Set(approvals.map((a) => a.key!))].map(async (key) => [key, await keysNow.currentIdentity(key)] as const)));
  const ended = [...new Set(approvals.filter((a) => 'ended' in keys.get(a.key!)!).map((a) => a.user))];
  const signIns = new Map(await Promise.all(ended.map(async (user) => [user, await keysNow.currentSignIn(user)] as const)));
  return { keys, signIns };
}

/** Whether the earlier approval `a` of `req` still counts (see above), by what approversNow read. */
export function stillApproves(a: Approval, req: AccessRequest, read: ApproversNow, authz: Authorizer, teams: TeamIndex): boolean {
  // By the approver's name and these groups, as no key of its own says now.
  const byName = (groups: string[] = []) => authz.allowed(identityFor({ user: a.user, groups }, teams, ''), 'update', 'accessrequests', req, 'approval');
  // As the identity would approve now: its rights and its key's scope.
  const asNow = (who: Identity) =>
    who.name === a.user &&
    scopeDenial(who.scope, { verb: 'update', group: authz.group, resource: 'accessrequests', subresource: 'approval', ...(req.metadata.name ? { name: req.metadata.name } : {}) }) === undefined &&
    authz.allowed(who, 'update', 'accessrequests', req, 'approval');
  if (a.key === undefined) return byName();
  const now = read.keys.get(a.key);
  // Recorded after the keys were read (an approval at the same moment): its groups are its key's of a moment ago.
  if (now === undefined) return byName(a.groups);
  if ('identity' in now) return asNow(now.identity);
  if ('disabled' in now) return false;
  const signIn = read.signIns.get(a.user);
  return signIn ? asNow(signIn) : byName();
}
