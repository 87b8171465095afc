/**
 * The rules of an AccessRequest that need no server: its duration (metav1.Duration strings), the
 * team's limits, and the status an approval or the end of its time gives it. The registry, the
 * authorizer and the expiry sweep all ask here, so each rule is written once.
 */
import type { AccessRequest, Team } from './types.js';

/** Set by the server on every new request: the uid of the Team it was asked of (registry/request-binding.ts). */
export const requestTeamUidAnnotation = 'management.service/team-uid';

/** What ties a request to the team it was asked of: the uid the server bound, and when it was made. */
export interface RequestBinding {
  teamUid?: string;
  requestedAt?: string;
}

export const bindingOf = (req: AccessRequest): RequestBinding => ({
  ...(req.metadata.annotations?.[requestTeamUidAnnotation] !== undefined ? { teamUid: req.metadata.annotations[requestTeamUidAnnotation] } : {}),
  ...(req.metadata.creationTimestamp ? { requestedAt: req.metadata.creationTimestamp } : {}),
});

/**
 * Whether a request was asked of this very team, not of an earlier one deleted since whose name it
 * took: by the uid the server bound the request to, or, for a request stored before bindings were
 * kept, by creation times (the team existed when the request was made). Unknown times: no.
 */
export function madeOf(b: RequestBinding, team: Team): boolean {
  if (b.teamUid !== undefined) return b.teamUid === team.metadata.uid;
  return Date.parse(team.metadata.creationTimestamp ?? '') <= Date.parse(b.requestedAt ?? '');
}

/** The default duration, and the default maximum a Team allows (spec.accessRequests.maxDuration). */
export const defaultRequestMs = 8 * 3_600_000;
/**
 * No request lasts less. The issue asks for no minimum above 10s; one second refuses only the
 * meaningless (a zero or sub-second grant) and keeps a 3s request possible.
 */
export const minRequestMs = 1_000;

const goUnits: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, 'µs': 0.001, ns: 0.000001 };

/** Milliseconds of a Go duration string as metav1.Duration writes it (4h, 30m, 1h30m0s, 1.5h), or undefined. */
export function goDurationMs(text: string): number | undefined {
  if (!/^(\d+(\.\d+)?(h|ms|m|s|us|µs|ns))+$/.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(m[1]) * goUnits[m[2]!]!;
  return Math.round(total);
}

/** The longest a request for `team` may last; a break-glass one at most the shorter of the team's two maximums. */
export function teamMaxMs(team: Team | undefined, breakGlass = false): number {
  const declared = team?.spec?.accessRequests?.maxDuration;
  const max = (declared !== undefined ? goDurationMs(declared) : undefined) ?? defaultRequestMs;
  return breakGlass ? Math.min(max, breakGlassMaxMs(team)) : max;
}

/** The default length of a break-glass request, and its default maximum: short, as it needs no approval. */
export const defaultBreakGlassMs = 3_600_000;

function breakGlassMaxMs(team: Team | undefined): number {
  const declared = team?.spec?.accessRequests?.breakGlass?.maxDuration;
  return (declared !== undefined ? goDurationMs(declared) : undefined) ?? defaultBreakGlassMs;
}

/** How many different approvers a request for `team` needs. */
export const requiredApprovals = (team: Team | undefined): number => team?.spec?.accessRequests?.requiredApprovals ?? 1;

/**
 * Who may approve requests for `team`: its owner user and its declared approvers (an owner team's
 * members through `teams`). `team` as the team index holds it (auth/team-view.ts: lists of strings,
 * no owner team named ''), which every caller reads: a stored Team of a shape the schema would
 * refuse (approvers as one string, an empty owner team) then approves through none of them.
 */
export function isApprover(team: Team | undefined, user: string | undefined, teams: readonly string[]): boolean {
  if (!team || user === undefined) return false;
  const owner = team.spec?.owner;
  if (owner?.user === user || (owner?.team !== undefined && teams.includes(owner.team))) return true;
  return (team.spec?.accessRequests?.approvers ?? []).includes(user);
}

/**
 * The duration a request lasts once active: spec.duration, else the default capped by the team's
 * maximum; a break-glass one, activated before the Team is read (breakGlassStatus), 1h by default.
 */
export function requestMs(req: AccessRequest, team: Team | undefined): number {
  const asked = req.spec.duration;
  if (asked !== undefined) return goDurationMs(asked) ?? 0;
  return req.spec.breakGlass ? defaultBreakGlassMs : Math.min(defaultRequestMs, teamMaxMs(team));
}

/** Why a request's duration is not allowed for `team`, or undefined. */
export function durationRefusal(req: AccessRequest, team: Team | undefined): string | undefined {
  const asked = req.spec.duration;
  if (asked !== undefined && goDurationMs(asked) === undefined) return `spec.duration "${asked}" is not a duration such as 4h, 30m or 20s`;
  const ms = requestMs(req, team);
  if (ms < minRequestMs) return `spec.duration ${asked} is shorter than the minimum of 1s`;
  const max = teamMaxMs(team, req.spec.breakGlass === true);
  if (ms > max && req.spec.breakGlass) return `a break-glass request lasts at most ${max / 1000}s on team "${req.spec.team}" (breakGlass.maxDuration ${team?.spec?.accessRequests?.breakGlass?.maxDuration ?? '1h'}, maxDuration ${team?.spec?.accessRequests?.maxDuration ?? '8h'}); ask for less with spec.duration`;
  if (ms > max) return `spec.duration ${asked} is longer than team "${req.spec.team}" allows (maxDuration ${team?.spec?.accessRequests?.maxDuration ?? '8h'})`;
  return undefined;
}

/** The epoch ms the request's access ends, when it is Active; an Active request past it grants nothing. */
export function activeUntil(req: AccessRequest, now: Date): number | undefined {
  const s = req.status;
  if (s?.phase !== 'Active' || !s.expiresAt || req.metadata.deletionTimestamp) return undefined;
  const end = Date.parse(s.expiresAt);
  return now.getTime() < end ? end : undefined;
}

/** RFC 3339 with second precision, as kube writes metav1.Time. */
const time = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

type Condition = NonNullable<NonNullable<AccessRequest['status']>['conditions']>[number];

function withCondition(conditions: Condition[] | undefined, c: Condition): Condition[] {
  return [...(conditions ?? []).filter((x) => x.type !== c.type), c];
}

/** The condition a Pending request holds once approved short of its required approvals. */
export const awaiting = 'AwaitingApprovals';
const withoutAwaiting = (conditions: Condition[] | undefined) => conditions?.filter((c) => c.type !== awaiting);

/** The status a new request starts with. */
export const pendingStatus = (): NonNullable<AccessRequest['status']> => ({ phase: 'Pending', approvals: [] });

/** Whether a break-glass request still owes its review. */
export const owesReview = (req: AccessRequest): boolean => req.status?.conditions?.some((c) => c.type === 'NeedsReview' && c.status === 'True') === true;

/**
 * The status a break-glass request starts with: Active at once from its creation (`now`), owing a
 * review. Whether its team allows it, for whom and how long, is the admission chain's to judge
 * (server/admission/access-requests.ts), on this very status.
 */
export function breakGlassStatus(req: AccessRequest, now: Date): NonNullable<AccessRequest['status']> {
  const at = time(now);
  return {
    phase: 'Active',
    approvals: [],
    activatedAt: at,
    expiresAt: time(new Date(now.getTime() + requestMs(req, undefined))),
    conditions: [
      { type: 'BreakGlass', status: 'True', reason: 'BreakGlass', message: 'active at once without approval', lastTransitionTime: at, lastUpdateTime: at },
      { type: 'NeedsReview', status: 'True', reason: 'BreakGlass', message: `break-glass use of team "${req.spec.team}" owes a review by one of its approvers`, lastTransitionTime: at, lastUpdateTime: at },
    ],
  };
}

/**
 * The status after `reviewer` reviews a break-glass request at `now` (its approval subresource,
 * whether it is still Active or already Expired): the review is owed no more. Nothing else changes.
 */
export function reviewed(req: AccessRequest, reviewer: string, now: Date): NonNullable<AccessRequest['status']> {
  const status = structuredClone(req.status ?? pendingStatus());
  if (!owesReview(req)) return status;
  status.conditions = withCondition(status.conditions, { type: 'NeedsReview', status: 'False', reason: 'Reviewed', message: `reviewed by ${reviewer}`, lastTransitionTime: time(now), lastUpdateTime: time(now) });
  return status;
}

/** One approval as the request's status records it. */
export type Approval = NonNullable<NonNullable<AccessRequest['status']>['approvals']>[number];

/**
 * The status after `approver` approves at `now`: the same approver twice counts once; once the team's
 * required number of those who may still approve is reached the request is Active until now + its
 * duration, at most the team's maxDuration as it is now. Only a Pending request changes.
 */
export function approved(
  req: AccessRequest,
  team: Team | undefined,
  approver: { user: string; groups: readonly string[]; key?: string },
  now: Date,
  /** Whether an earlier approver may still approve the request. */
  stillApproves: (a: Approval) => boolean,
): NonNullable<AccessRequest['status']> {
  const status = structuredClone(req.status ?? pendingStatus());
  if (status.phase !== 'Pending') return status;
  const approvals = status.approvals ?? [];
  // Once per approver; approving again records the key and groups it approves with now.
  const record = { user: approver.user, time: time(now), ...(approver.groups.length > 0 ? { groups: [...approver.groups].sort() } : {}), ...(approver.key ? { key: approver.key } : {}) };
  const at = approvals.findIndex((a) => a.user === approver.user);
  if (at < 0) approvals.push(record);
  else approvals[at] = record;
  status.approvals = approvals;
  // An approval counts while its approver may still approve: one taken out of the approvers (or
  // the owner team) since would otherwise still make up the team's two-person rule (found by a review).
  const counted = approvals.filter((a) => a.user === approver.user || stillApproves(a));
  const needed = requiredApprovals(team);
  if (counted.length < needed) {
    // Said where every client reads it (kubectl, `teamkeys approve`): how far the request is, and
    // whose approvals make it up now, since an earlier one may have stopped counting. Its own type,
    // held only while waiting: an `Approved` condition of any status reads as decided to clients
    // written for kube's CertificateSigningRequests (kubectl certificate approve skips those).
    const message = `${counted.length} of ${needed} required approvals count: ${counted.map((a) => a.user).join(', ')}`;
    // Already waiting: its status did not change, so neither does when it last did (kube's convention).
    const since = status.conditions?.find((c) => c.type === awaiting && c.status === 'True')?.lastTransitionTime ?? time(now);
    status.conditions = withCondition(status.conditions, { type: awaiting, status: 'True', reason: 'MoreApprovalsRequired', message, lastTransitionTime: since, lastUpdateTime: time(now) });
    return status;
  }
  const message = `approved by ${counted.map((a) => a.user).join(', ')}`;
  status.conditions = withCondition(withoutAwaiting(status.conditions), { type: 'Approved', status: 'True', reason: 'Approved', message, lastTransitionTime: time(now), lastUpdateTime: time(now) });
  status.phase = 'Active';
  status.activatedAt = time(now);
  // The team's maximum as it is now: one lowered since the request was asked bounds it too (a
  // review found a request asked under 8h approved for 8h after the team allowed 1h).
  status.expiresAt = time(new Date(now.getTime() + Math.min(requestMs(req, team), teamMaxMs(team))));
  return status;
}

/** The status after `approver` denies a Pending request. */
export function denied(req: AccessRequest, approver: string, reason: string, now: Date): NonNullable<AccessRequest['status']> {
  const status = structuredClone(req.status ?? pendingStatus());
  if (status.phase !== 'Pending') return status;
  status.phase = 'Denied';
  status.conditions = withCondition(withoutAwaiting(status.conditions), { type: 'Denied', status: 'True', reason: 'Denied', message: `denied by ${approver}${reason ? `: ${reason}` : ''}`, lastTransitionTime: time(now), lastUpdateTime: time(now) });
  return status;
}

/** The status of an Active request whose time is over at `now`, or undefined when it is not over. */
export function expired(req: AccessRequest, now: Date): NonNullable<AccessRequest['status']> | undefined {
  const s = req.status;
  if (s?.phase !== 'Active' || !s.expiresAt || now.getTime() < Date.parse(s.expiresAt)) return undefined;
  const status = structuredClone(s);
  status.phase = 'Expired';
  status.conditions = withCondition(status.conditions, { type: 'Expired', status: 'True', reason: 'Expired', message: `access ended at ${s.expiresAt}`, lastTransitionTime: time(now), lastUpdateTime: time(now) });
  return status;
}
