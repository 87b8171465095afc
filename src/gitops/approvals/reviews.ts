/**
 * A pull request's approvals, read from GitHub's REST API (its base URL configurable, as GHES and
 * the tests need): the latest review of each reviewer counts, an approval only if it is of the pull
 * request's head commit (a stale one does not), not dismissed, and not by the author.
 */
export interface PullRequestRef {
  owner: string;
  repo: string;
  number: number;
}

export interface GitHubApi {
  /** https://api.github.com, or a GitHub Enterprise / stand-in base URL. */
  url: string;
  token?: string;
}

/** A review as GitHub lists it (GET /repos/{owner}/{repo}/pulls/{n}/reviews). */
export interface Review {
  user?: { login?: string } | null;
  state?: string;
  commit_id?: string;
}

export interface PullRequestApprovals {
  author: string;
  headSha: string;
  /** Lower-case logins whose approval counts. */
  approvedBy: string[];
}

/** `owner/repo#12`: the way a report names a pull request. */
export const pullRequestName = (pr: PullRequestRef) => `${pr.owner}/${pr.repo}#${pr.number}`;

/** Parses `owner/repo#12` (or a pull request's URL); undefined when it is neither. */
export function parsePullRequest(text: string): PullRequestRef | undefined {
  const m = text.match(/^([\w.-]+)\/([\w.-]+)#(\d+)$/) ?? text.match(/^https?:\/\/[^/]+\/([\w.-]+)\/([\w.-]+)\/pull\/(\d+)\/?$/);
  return m ? { owner: m[1]!, repo: m[2]!, number: Number(m[3]) } : undefined;
}

/** The logins whose latest deciding review approves `headSha`, the author left out. */
export function countedApprovals(reviews: readonly Review[], author: string, headSha: string): string[] {
  // Listed oldest first; a comment after an approval leaves it standing, as GitHub's own count does.
  const latest = new Map<string, Review>();
  for (const r of reviews) {
    const login = r.user?.login?.toLowerCase();
    if (login && ['APPROVED', 'CHANGES_REQUESTED', 'DISMISSED'].includes(r.state ?? '')) latest.set(login, r);
  }
  return [...latest]
    .filter(([login, r]) => r.state === 'APPROVED' && r.commit_id === headSha && login !== author.toLowerCase())
    .map(([login]) => login)
    .sort();
}

async function getJson(api: GitHubApi, path: string): Promise<unknown> {
  const res = await fetch(`${api.url.replace(/\/+$/, '')}${path}`, {
    headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', ...(api.token ? { authorization: `Bearer ${api.token}` } : {}) },
  });
  if (!res.ok) throw new Error(`GitHub answered ${res.status} to GET ${path}`);
  return res.json();
}

/** The pull request's author, head commit and counted approvals (every page of reviews). */
export async function readApprovals(api: GitHubApi, pr: PullRequestRef): Promise<PullRequestApprovals> {
  const base = `/repos/${encodeURIComponent(pr.owner)}/${encodeURIComponent(pr.repo)}/pulls/${pr.number}`;
  const info = (await getJson(api, base)) as { user?: { login?: string }; head?: { sha?: string } };
  const author = info.user?.login ?? '';
  const headSha = info.head?.sha ?? '';
  if (!author || !headSha) throw new Error(`GitHub's answer for pull request ${pullRequestName(pr)} names no author or head commit`);
  const reviews: Review[] = [];
  // Bounded: 30 pages of 100 is more reviews than any pull request gets.
  for (let page = 1; page <= 30; page++) {
    const batch = (await getJson(api, `${base}/reviews?per_page=100&page=${page}`)) as Review[];
    if (!Array.isArray(batch)) throw new Error(`GitHub's reviews of ${pullRequestName(pr)} are not a list`);
    reviews.push(...batch);
    if (batch.length < 100) break;
  }
  return { author, headSha, approvedBy: countedApprovals(reviews, author, headSha) };
}
