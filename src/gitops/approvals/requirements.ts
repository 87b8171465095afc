/**
 * Who must approve a plan, from the Teams themselves: a change to team T (the Team, one of its
 * team keys, or a FederatedCredential minting them) needs an approval from one of T's approvers as they are live (so a pull request cannot
 * name its own approvers): `spec.owner.user`, the users of the `spec.owner.team` team, and the GitHub
 * logins in T's `gitops.management.service/approvers` annotation. A new team's come from its
 * manifest: its owner accepts the team. docs/gitops.md, "Approvals".
 */
import type { KubeObject, Team } from '../../api/types.js';
import type { PlanStep } from '../plan/plan.js';

export const approversAnnotation = 'gitops.management.service/approvers';

/** One team's changes in a plan and who may approve them (or one user's or subject's: `holder`). */
export interface ApprovalRequirement {
  /** The team, or with `holder` the user or subject the changed keys and rules act for. */
  team: string;
  /**
   * A key or FederatedCredential acting for a user (that user approves it, as a reviewer who is not
   * the author) or for a subject (no one can: a team's key is approvable).
   * Absent: a team's.
   */
  holder?: 'user' | 'subject';
  /** GitHub logins (lower-case), sorted; empty: the team declares no one. */
  approvers: string[];
  /** The plan's changes it covers: `update Team/payments`. */
  changes: string[];
}

/** The logins the annotation lists (comma or space separated, `@` optional). */
export function annotatedApprovers(team: KubeObject | undefined): string[] {
  const text = team?.metadata.annotations?.[approversAnnotation] ?? '';
  return text.split(/[\s,]+/).map((l) => l.replace(/^@/, '').toLowerCase()).filter(Boolean);
}

/** Who may approve a change to `team`: its owner (a user, or the users of a team), and its annotation. */
function approversOf(team: Team | undefined, teamNamed: (name: string) => Team | undefined): string[] {
  const owner = team?.spec?.owner;
  const owners = [...(owner?.user ? [owner.user] : []), ...(owner?.team ? (teamNamed(owner.team)?.spec?.users ?? []) : [])];
  return [...new Set([...owners.map((u) => u.toLowerCase()), ...annotatedApprovers(team)])].sort();
}

/**
 * Whom a key or a FederatedCredential (the keys it mints) acts for, as approvals group it: its team,
 * else its user, else its subject. Until stop 62 a rule was grouped by its own name as if it were a
 * team (a rule named like a team its author owns passed with that team's approval), and a key of a
 * user or subject by none at all, so it needed no approval (found by a review).
 */
function holderOf(obj: KubeObject | undefined): string | undefined {
  const spec = obj?.spec as { team?: string; user?: string; subject?: string } | undefined;
  if (!spec) return undefined;
  if (spec.team) return `team\0${spec.team}`;
  if (spec.user) return `user\0${spec.user}`;
  return `subject\0${spec.subject ?? ''}`;
}

/** The actions that write (an unchanged or skipped object changes nothing). */
const writes = new Set(['create', 'update', 'replace', 'delete']);

/** The requirement of each team a plan changes. */
export function approvalRequirements(
  actions: readonly PlanStep[],
  desired: readonly KubeObject[],
  live: { teams: readonly KubeObject[]; ownedaccesskeys: readonly KubeObject[]; federatedcredentials?: readonly KubeObject[] },
): ApprovalRequirement[] {
  const find = (list: readonly KubeObject[], name: string) => list.find((o) => o.metadata.name === name);
  const liveTeam = (name: string) => find(live.teams, name) as Team | undefined;
  const byTeam = new Map<string, string[]>();
  for (const a of actions) {
    if (!writes.has(a.type)) continue;
    // A key or rule moved between holders needs both holders' approval.
    // A subject's key or rule going away (deleted, or moved to a team, whose approval the move
    // needs) hands no one anything: only one kept or made for a subject asks for an approval no one
    // can give (the review of the change found subject keys could never be deleted or moved).
    const leaving = holderOf(find(a.plural === 'ownedaccesskeys' ? live.ownedaccesskeys : (live.federatedcredentials ?? []), a.name));
    const holders =
      a.plural === 'teams'
        ? [`team\0${a.name}`]
        : [leaving?.startsWith('subject\0') ? undefined : leaving, holderOf(desired.find((d) => d.kind === a.kind && d.metadata.name === a.name))];
    for (const holder of new Set(holders.filter((t): t is string => t !== undefined))) byTeam.set(holder, [...(byTeam.get(holder) ?? []), `${a.type} ${a.kind}/${a.name}`]);
  }
  return [...byTeam.entries()]
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([holder, changes]) => {
      const [kind, name] = holder.split('\0') as ['team' | 'user' | 'subject', string];
      if (kind === 'user') return { team: name, holder: kind, approvers: [name.toLowerCase()], changes };
      if (kind === 'subject') return { team: name, holder: kind, approvers: [], changes };
      const current = liveTeam(name) ?? (desired.find((d) => d.kind === 'Team' && d.metadata.name === name) as Team | undefined);
      return { team: name, approvers: approversOf(current, liveTeam), changes };
    });
}
