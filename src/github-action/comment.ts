/**
 * The pull request comment: one per source, found again by a hidden marker and edited in place
 * on every run (as tfcmt and Atlantis keep theirs), so a pull request never collects stale plans.
 */
import * as github from '@actions/github';

/** GitHub refuses comment bodies longer than this many characters. */
export const commentLimit = 65_536;

/** The hidden line that identifies this source's comment. */
export function commentMarker(sourceId: string): string {
  return `<!-- teamkeys-plan source=${JSON.stringify(sourceId).replace(/--/g, '-\\u002d')} -->`;
}

/**
 * The comment text: the marker, then the report, cut at a line boundary when it would not fit,
 * with a note saying so and where the whole report is (the job summary).
 */
export function commentBody(sourceId: string, markdown: string, summaryUrl: string | undefined, limit = commentLimit): string {
  const head = `${commentMarker(sourceId)}\n`;
  const where = summaryUrl ? `the [job summary](${summaryUrl})` : 'the job summary';
  const foot = `\n<sub>The whole report, with every object, is in ${where}.</sub>\n`;
  if (head.length + markdown.length + foot.length <= limit) return head + markdown + foot;
  const note = `\n\n> [!WARNING]\n> **The plan is too long for a pull request comment (${markdown.length} characters): it was cut here.** Read the whole report in ${where}.\n`;
  const room = limit - head.length - note.length;
  const cut = markdown.lastIndexOf('\n', room);
  return head + markdown.slice(0, cut > 0 ? cut : room) + note;
}

export interface CommentTarget {
  token: string;
  owner: string;
  repo: string;
  issueNumber: number;
  /** The API's base URL; default @actions/github's (GITHUB_API_URL as the process started). */
  apiUrl?: string;
}

/** Creates the comment, or edits the one carrying the marker; returns which it did, its id and URL (its API URL, or its id, when GitHub gave no page URL). */
export async function upsertComment(target: CommentTarget, marker: string, body: string): Promise<{ action: 'created' | 'updated'; id: number; url: string }> {
  const octokit = github.getOctokit(target.token, target.apiUrl ? { baseUrl: target.apiUrl } : {});
  const where = { owner: target.owner, repo: target.repo };
  const comments = await octokit.paginate(octokit.rest.issues.listComments, { ...where, issue_number: target.issueNumber, per_page: 100 });
  // Ours starts with the marker (a marker quoted anywhere else in a comment, text from a manifest,
  // does not make it ours), and the Action's own identity wrote it: the marker is public, and a
  // comment a pull request's author posted with it first took the plan's place, theirs to edit
  // back afterwards (found by a review). A user's token can say whom it acts for; the workflow's
  // GITHUB_TOKEN and an app's token cannot (403), and comment as a bot, which no person can be.
  const me = await octokit.rest.users.getAuthenticated().then((r) => r.data.login, () => undefined);
  const byUs = (c: { user?: { login?: string; type?: string } | null }) => (me !== undefined ? c.user?.login === me : c.user?.type === 'Bot');
  const mine = comments.find((c) => c.body?.startsWith(`${marker}\n`) && byUs(c));
  const done = (action: 'created' | 'updated', data: { id: number; html_url?: string; url?: string }) => ({ action, id: data.id, url: data.html_url || data.url || `comment ${data.id}` });
  if (mine) return done('updated', (await octokit.rest.issues.updateComment({ ...where, comment_id: mine.id, body })).data);
  return done('created', (await octokit.rest.issues.createComment({ ...where, issue_number: target.issueNumber, body })).data);
}

/** What GitHub keeps of a step summary (1 MiB; a longer one is dropped whole), less room for the note. */
export const summaryLimitBytes = 1024 * 1024 - 4096;

/**
 * The job summary: the report whole when GitHub keeps it, else cut at a line with a note saying
 * where the whole report is. A pull request decides the report's length, and GitHub drops a
 * summary over 1 MiB entirely, so the rest of a long report was shown nowhere (found by a review).
 */
export function summaryBody(markdown: string, reportFile: string, limit = summaryLimitBytes): string {
  if (Buffer.byteLength(markdown) <= limit) return markdown;
  const note = `\n\n> [!WARNING]\n> **The report is too long for a job summary (${Buffer.byteLength(markdown)} bytes): it was cut here.** The whole report is the file ${reportFile} the step wrote (upload it as an artifact), and the \`report-json\` output.\n`;
  // Cut by characters first (never more bytes than characters), then at the last line that fits.
  let text = markdown.slice(0, limit - Buffer.byteLength(note));
  while (Buffer.byteLength(text) + Buffer.byteLength(note) > limit) text = text.slice(0, Math.floor(text.length * 0.9));
  const cut = text.lastIndexOf('\n');
  return (cut > 0 ? text.slice(0, cut) : text) + note;
}
