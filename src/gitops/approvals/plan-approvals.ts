/**
 * The approvals of a plan made for a pull request: its requirements from the Teams as they are
 * (requirements.ts), the pull request's reviews read now (reviews.ts), and the result in the report.
 * A saved plan keeps the requirements and the pull request, and its apply asks GitHub again.
 */
import type { Reconciled } from '../reconcile.js';
import { checkApprovals, type ApprovalReport } from './check.js';
import { approvalRequirements, type ApprovalRequirement } from './requirements.js';
import { readApprovals, type GitHubApi, type PullRequestRef } from './reviews.js';

/** What a saved plan records so that its apply checks the approvals again. */
export interface SavedApprovals {
  pullRequest: PullRequestRef;
  requirements: ApprovalRequirement[];
}

/** The GitHub API the CLI uses: GITHUB_API_URL (default api.github.com) and GITHUB_TOKEN, as the Actions runner sets them. */
export function githubApiFromEnv(env: NodeJS.ProcessEnv = process.env): GitHubApi {
  return { url: env.GITHUB_API_URL || 'https://api.github.com', ...(env.GITHUB_TOKEN ? { token: env.GITHUB_TOKEN } : {}) };
}

/** Reads the pull request's approvals and checks them; a GitHub that cannot be read counts as no approval (fail closed). */
export async function approvalsOf(pr: PullRequestRef, github: GitHubApi, requirements: ApprovalRequirement[]): Promise<ApprovalReport> {
  try {
    return checkApprovals(pr, await readApprovals(github, pr), requirements);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const report = checkApprovals(pr, { author: '(unknown)', headSha: '', approvedBy: [] }, requirements);
    return { ...report, missing: requirements.length > 0 ? [`the reviews of the pull request could not be read (${why}), so no approval counts`] : [] };
  }
}

/** Adds the approvals section to a plan's report; returns what a saved plan of it records. */
export async function approvePlan(r: Reconciled, pr: PullRequestRef, github: GitHubApi): Promise<SavedApprovals | undefined> {
  if (!r.plan || !r.desired || !r.live) return undefined;
  const requirements = approvalRequirements(r.plan.actions, r.desired.map((d) => d.obj), r.live);
  r.report.approvals = await approvalsOf(pr, github, requirements);
  return { pullRequest: pr, requirements };
}
