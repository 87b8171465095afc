/**
 * PUT accessrequests/<name>/approval, as kube approves a CertificateSigningRequest: the body is the
 * object with an `Approved` or `Denied` condition added. The server records the caller (never the
 * body's word) once, however often they approve, and turns the request Active once the team's
 * required approvals are in (api/access-request.ts). Authorization (the team's approvers, never the
 * requester) and the admission chain judge it inside the write (guard.ts admit('approval')). On a
 * break-glass request, Active already, an approval is its review (the NeedsReview condition turns False).
 */
import { approved, denied, reviewed } from '../../api/access-request.js';
import type { Authorizer } from '../../auth/authorize.js';
import { approversNow, nobodyRead, stillApproves, type KeysNow } from '../earlier-approvals.js';
import { badRequest, conflict } from '../../api/errors.js';
import type { AccessRequest, KubeObject } from '../../api/types.js';
import { isJsonMap } from '../../api/types.js';
import type { ResourceRegistry } from '../../registry/resource-registry.js';
import type { TeamIndex } from '../../auth/team-index.js';
import type { Guard } from '../auth/guard.js';

/** The decision a body asks for: the Denied condition wins over Approved, as kube's CSR approver reads them. */
export function decisionOf(body: unknown): { approve: boolean; reason: string } {
  const conditions = isJsonMap(body) && isJsonMap(body.status) && Array.isArray(body.status.conditions) ? body.status.conditions : [];
  const find = (type: string) => conditions.find((c): c is Record<string, unknown> => isJsonMap(c) && c.type === type && c.status === 'True');
  const deny = find('Denied');
  if (deny) return { approve: false, reason: typeof deny.message === 'string' ? deny.message : '' };
  if (find('Approved')) return { approve: true, reason: '' };
  throw badRequest('an approval must add a status.conditions entry of type Approved or Denied with status "True"');
}

/** The request the body was read from: its uid and resourceVersion, when it names them. */
function readVersion(body: unknown): { uid?: string; resourceVersion?: string } {
  const meta = isJsonMap(body) && isJsonMap(body.metadata) ? body.metadata : {};
  return { ...(typeof meta.uid === 'string' ? { uid: meta.uid } : {}), ...(typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '' ? { resourceVersion: meta.resourceVersion } : {}) };
}

/**
 * Records the caller's approval or denial of `name`, of the version the body was read from: an
 * approver approves what they read. A body naming another uid (the request was withdrawn and asked
 * again under its name, perhaps for more) or an older resourceVersion is 409 Conflict, as kube's
 * preconditions answer; before, the decision landed on whatever request held the name (found by a
 * review: a request for one role, re-asked for the whole membership between the read and the PUT).
 */
export async function decideRequest(r: ResourceRegistry, teams: TeamIndex, authz: Authorizer, keysNow: KeysNow, guard: Guard, name: string, body: unknown, opts: { fieldManager: string; now: () => Date; dryRun?: boolean }): Promise<KubeObject> {
  const { approve, reason } = decisionOf(body);
  const read = readVersion(body);
  const approver = guard.who.name;
  // Read once the gate found the caller may approve requests at all (authorizeBeforeBody), before
  // the write judges it on this one: at most 64 key reads (the approvals' bound).
  const approvers = approve ? await approversNow(r, keysNow, name) : nobodyRead;
  // Impersonated, the key is the impersonator's: not the approver's to count again later.
  const key = guard.who.impersonation ? undefined : guard.who.keyName;
  return r.writeStatus(
    name,
    (current) => {
      if (read.uid !== undefined && read.uid !== current.metadata.uid) throw conflict(r.ctx.gr, name, `Precondition failed: UID in precondition: ${read.uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
      if (read.resourceVersion !== undefined && read.resourceVersion !== current.metadata.resourceVersion) throw conflict(r.ctx.gr, name);
      const req = current as AccessRequest;
      const now = opts.now();
      if (req.spec.breakGlass) return approve ? reviewed(req, approver, now) : req.status;
      return approve ? approved(req, teams.get(req.spec.team), { user: approver, groups: guard.who.groups, ...(key ? { key } : {}) }, now, (a) => stillApproves(a, req, approvers, authz, teams)) : denied(req, approver, reason, now);
    },
    { fieldManager: opts.fieldManager, observedAs: 'approval', admit: guard.admit('approval'), ...(opts.dryRun ? { dryRun: true } : {}) },
  );
}
