/**
 * The approvals of a plan made for a pull request: its requirements from the Teams as they are
 * (requirements.ts), the pull request's reviews read now (reviews.ts), and the result in the report.
 * A saved plan keeps the requirements and the pull request, and its apply asks GitHub again.
 */
import type { KubeObject } from '../../api/types.js';
import type { Reconciled } from '../reconcile.js';
import { checkApprovals, type ApprovalReport } from './check.js';
import { approvalRequirements, type ApprovalRequirement } from './requirements.js';
import { readApprovals, type GitHubApi, type PullRequestRef } from './reviews.js';

/** What a saved plan records so that its apply checks the approvals again. */
export interface SavedApprovals {
  pullRequest: PullRequestRef;
  requirements: ApprovalRequirement[];
  /**
   * The commit the plan was made of (the source's revision; without one, the pull request's head
   * read at plan time, '' when GitHub could not be read): approvals count for the commit they
   * approve, so the apply refuses unless they are of this one (approvals of a later commit applied
   * an earlier plan: found by a review). Absent in plans saved before stop 62.
   */
  headSha?: string;
}

/** The GitHub API the CLI uses: GITHUB_API_URL (default api.github.com) and GITHUB_TOKEN, as the Actions runner sets them. */
export function githubApiFromEnv(env: NodeJS.ProcessEnv = process.env): GitHubApi {
  return { url: env.GITHUB_API_URL || 'https://api.github.com', ...(env.GITHUB_TOKEN ? { token: env.GITHUB_TOKEN } : {}) };
}

/** Reads the pull request's approvals and checks them; a GitHub that cannot be read counts as no approval (fail closed). */
export async function approvalsOf(pr: PullRequestRef, github: GitHubApi, requirements: ApprovalRequirement[], named?: (login: string) => boolean): Promise<ApprovalReport> {
  try {
    return checkApprovals(pr, await readApprovals(github, pr), requirements, named);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const report = checkApprovals(pr, { author: '(unknown)', headSha: '', approvedBy: [] }, requirements, named);
    return { ...report, missing: requirements.length > 0 ? [`the reviews of the pull request could not be read (${why}), so no approval counts`] : [] };
  }
}

/** Adds the approvals section to a plan's report; returns what a saved plan of it records. */
export async function approvePlan(r: Reconciled, pr: PullRequestRef, github: GitHubApi): Promise<SavedApprovals | undefined> {
  if (!r.plan || !r.desired || !r.live) return undefined;
  const requirements = approvalRequirements(r.plan.actions, r.desired.map((d) => d.obj), r.live);
  // A pull request's report names no member of a team it does not describe (as its access change
  // withholds them): approvers come from the live owner team too (found by a review). The saved
  // requirements keep every login, for the apply's check.
  r.report.approvals = await approvalsOf(pr, github, requirements, r.withheld ? loginsNamedIn(r.desired.map((d) => d.obj)) : undefined);
  // The commit the plan was made of, where the source says (a git ref), else the head read now: the
  // apply's approvals count only if they are of that very commit (the review of the fix found a push
  // between the checkout and this read recorded the new head against the old content).
  return { pullRequest: pr, requirements, headSha: r.report.source.revision ?? r.report.approvals.headSha };
}

/** Every word of every string a manifest holds (its users, its owner, its approvers annotation's logins). */
function loginsNamedIn(objects: readonly KubeObject[]): (login: string) => boolean {
  const words = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') for (const w of v.split(/[\s,]+/)) words.add(w.toLowerCase());
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  for (const o of objects) walk([o.spec, o.metadata.annotations]);
  return (login) => words.has(login.toLowerCase());
}
