/** Requirements (requirements.ts) against a pull request's counted approvals (reviews.ts): what the report says. */
import type { ApprovalRequirement } from './requirements.js';
import { pullRequestName, type PullRequestApprovals, type PullRequestRef } from './reviews.js';

/** The report's approvals section. */
export interface ApprovalReport {
  pullRequest: string;
  author: string;
  headSha: string;
  teams: (ApprovalRequirement & { approvedBy: string[] })[];
  /** One sentence per missing approval; empty when every team's is there. */
  missing: string[];
}

/** The logins as the report names them: each one `named` allows, and how many others there are. */
function list(logins: string[], named: (login: string) => boolean): string {
  const shown = logins.filter(named).map((l) => `@${l}`).join(', ');
  const hidden = logins.filter((l) => !named(l)).length;
  return [shown, hidden > 0 ? `${hidden} of its owners or approvers not named in this pull request` : ''].filter(Boolean).join(', or ');
}

/**
 * The requirements against the approvals given. `named`: which approvers the report may name (in
 * pull-request mode, those the manifests name: approvers come from live owner teams too, whose
 * members a pull request's report does not tell); the others are counted, and who approved is
 * named as the pull request shows it anyway.
 */
export function checkApprovals(pr: PullRequestRef, given: PullRequestApprovals, requirements: readonly ApprovalRequirement[], named: (login: string) => boolean = () => true): ApprovalReport {
  const author = given.author.toLowerCase();
  // Never the author's own, a user's key included: a GitHub login is the user's name only where
  // sign-in is GitHub's, and anyone may open a pull request under a login that names an admin.
  const checked = requirements.map((r) => ({ ...r, approvedBy: r.approvers.filter((a) => given.approvedBy.includes(a) && a !== author) }));
  const missing = checked
    .filter((t) => t.approvedBy.length === 0)
    .map((t) => {
      const what = t.changes.join(', ');
      if (t.holder === 'user') {
        if (t.approvers.every((a) => a === author)) return `user "${t.team}" (${what}): needs an approval from the user it acts for, who is the author: a key of one's own is made with teamkeys login or kubectl, not by a pull request of one's own`;
        return `user "${t.team}" (${what}): needs an approval from ${list(t.approvers, named)}, the user it acts for`;
      }
      if (t.holder === 'subject') return `subject "${t.team}" (${what}): a key or rule acting for a subject has no owner to approve it; make it a team's (spec.team) to have it approved`;
      const eligible = t.approvers.filter((a) => a !== author);
      if (eligible.length === 0) return `team "${t.team}" (${what}): needs an approval from its owners or approvers, and it declares none but the author (spec.owner, or the ${'gitops.management.service/approvers'} annotation)`;
      return `team "${t.team}" (${what}): needs an approval from one of ${list(eligible, named)}`;
    });
  const teams = checked.map((t) => ({ ...t, approvers: t.approvers.filter(named) }));
  return { pullRequest: pullRequestName(pr), author: given.author, headSha: given.headSha, teams, missing };
}

/** The refusal a missing approval is, for a saved plan's apply; undefined when none is missing. */
export function approvalRefusal(a: ApprovalReport): string | undefined {
  return a.missing.length > 0 ? `approval missing on pull request ${a.pullRequest}: ${a.missing.join('; ')}` : undefined;
}
