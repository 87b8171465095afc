/**
 * Who must approve a plan, from the Teams themselves: a change to team T (the Team, or one of its
 * team keys) needs an approval from one of T's approvers as they are live (so a pull request cannot
 * name its own approvers): `spec.owner.user`, the users of the `spec.owner.team` team, and the GitHub
 * logins in T's `gitops.management.service/approvers` annotation. A new team's come from its
 * manifest: its owner accepts the team. docs/gitops.md, "Approvals".
 */
import type { KubeObject, Team } from '../../api/types.js';
import type { PlanStep } from '../plan/plan.js';

export const approversAnnotation = 'gitops.management.service/approvers';

/** One team's changes in a plan and who may approve them. */
export interface ApprovalRequirement {
  team: string;
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

const teamOfKey = (key: KubeObject | undefined): string | undefined => (key?.spec as { team?: string } | undefined)?.team;

/** The actions that write (an unchanged or skipped object changes nothing). */
const writes = new Set(['create', 'update', 'replace', 'delete']);

/** The requirement of each team a plan changes. */
export function approvalRequirements(actions: readonly PlanStep[], desired: readonly KubeObject[], live: { teams: readonly KubeObject[]; ownedaccesskeys: readonly KubeObject[] }): ApprovalRequirement[] {
  const find = (list: readonly KubeObject[], name: string) => list.find((o) => o.metadata.name === name);
  const liveTeam = (name: string) => find(live.teams, name) as Team | undefined;
  const byTeam = new Map<string, string[]>();
  for (const a of actions) {
    if (!writes.has(a.type)) continue;
    const key = a.plural === 'ownedaccesskeys';
    // A key moved between teams needs both teams' approval.
    const teams = key ? [teamOfKey(find(live.ownedaccesskeys, a.name)), teamOfKey(desired.find((d) => d.kind === 'OwnedAccessKey' && d.metadata.name === a.name))] : [a.name];
    for (const team of new Set(teams.filter((t): t is string => t !== undefined))) byTeam.set(team, [...(byTeam.get(team) ?? []), `${a.type} ${a.kind}/${a.name}`]);
  }
  return [...byTeam.entries()]
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([team, changes]) => {
      const current = liveTeam(team) ?? (desired.find((d) => d.kind === 'Team' && d.metadata.name === team) as Team | undefined);
      return { team, approvers: approversOf(current, liveTeam), changes };
    });
}
