/**
 * Whether a run of the Action may trust its checkout, decided from the event and failing closed:
 * only the events in the trusted-events input (default push, workflow_dispatch, schedule) run on
 * reviewed code. Every other event (pull_request, pull_request_target, pull_request_review,
 * issue_comment, workflow_run, merge_group, and any event GitHub adds later) is treated as a pull
 * request: policies from the base commit, live values withheld, no apply, no key delivered. A
 * trusted event on a ref trusted-refs does not list (default: the default branch) is one too.
 */

/** The events the Action trusts when the trusted-events input is not set. */
export const defaultTrustedEvents = ['push', 'workflow_dispatch', 'schedule'];

/**
 * Events whose checkout or payload a pull request's author controls (or may): never trusted, even
 * when listed, since listing one would send a pull request's manifests to the server.
 */
const neverTrusted = new Set(['pull_request', 'pull_request_target', 'pull_request_review', 'pull_request_review_comment', 'issue_comment', 'workflow_run', 'merge_group', 'check_run', 'check_suite', 'repository_dispatch', 'status', 'discussion_comment']);

/** The trusted-events input as a list (comma or space separated), or an error naming what it refuses. */
export function parseTrustedEvents(value: string): string[] {
  const events = value.split(/[\s,]+/).filter(Boolean);
  if (events.length === 0) return defaultTrustedEvents;
  const refused = events.filter((e) => neverTrusted.has(e));
  if (refused.length > 0) {
    throw new Error(`trusted-events may not list ${refused.join(', ')}: on such events the checkout or its payload comes from a pull request's author (list push, workflow_dispatch, schedule or release; a release's tags go in trusted-refs too)`);
  }
  const bad = events.filter((e) => !/^[a-z_]+$/.test(e));
  if (bad.length > 0) throw new Error(`trusted-events lists ${bad.map((e) => JSON.stringify(e)).join(', ')}, which are no event names`);
  return events;
}

/** Whether the run's event is one of the trusted ones (an empty event name is never trusted). */
export function isTrustedEvent(eventName: string, trusted: string[]): boolean {
  return eventName !== '' && trusted.includes(eventName);
}

interface Payload {
  pull_request?: { base?: { sha?: string } };
  merge_group?: { base_sha?: string };
}

/** The commit an untrusted run reads its policies from, when the event names one: the pull request's (or merge group's) base. */
export function baseCommitOf(payload: object): string | undefined {
  const p = payload as Payload;
  return p.pull_request?.base?.sha ?? p.merge_group?.base_sha;
}

/**
 * The trusted-refs input as patterns (comma or space separated): a branch name (`main`, meaning
 * refs/heads/main), a full ref (`refs/tags/v1.0.0`), or either ending in `*` (or `**`) for every
 * ref it begins, slashes included (`refs/tags/v*`, `release/*`); `*` alone trusts every ref.
 * What git could never name as a ref (`..`, `@{`, a `.lock` part, an empty part) is refused
 * rather than never matching. Empty: none given.
 */
export function parseTrustedRefs(value: string): string[] {
  // `**` at the end, as GitHub's branch filters write "everything below", means what `*` does here.
  const refs = value.split(/[\s,]+/).filter(Boolean).map((r) => (r.endsWith('**') ? r.slice(0, -1) : r));
  const bad = refs.filter((r) => r.slice(0, -1).includes('*') || /\.\.|@\{|\/\/|^\/|\/$|\.lock(\/|$)|[\u0000-\u0020\u007f~^:?[\\]/.test(r));
  if (bad.length > 0) throw new Error(`trusted-refs lists ${bad.map((r) => JSON.stringify(r)).join(', ')}, which are no ref patterns (a branch such as main, a ref such as refs/tags/v1.0.0, or either ending in * such as refs/tags/v*)`);
  return refs.map((r) => (r === '*' || r.startsWith('refs/') ? r : `refs/heads/${r}`));
}

/** Whether `ref` is one of the patterns (parseTrustedRefs' form). */
const refMatches = (ref: string, patterns: string[]) => patterns.some((p) => (p.endsWith('*') ? ref.startsWith(p.slice(0, -1)) : ref === p));

export interface RunRef {
  eventName: string;
  /** GITHUB_REF (for a push, the payload's ref too): what the run's checkout is. */
  ref: string;
  /** The payload's repository.default_branch, when it names one. */
  defaultBranch: string | undefined;
  /** parseTrustedRefs of the input; empty for the default, the repository's default branch. */
  trustedRefs: string[];
}

/**
 * Why a run of a trusted event is still not trusted: its ref is not one the Action trusts, by
 * default the repository's default branch. A push to a feature branch (or a workflow_dispatch run
 * on one) is code nobody has reviewed yet, like a pull request's, and a workflow listening to
 * `push` without a branch filter would otherwise apply it over main. Undefined when trusted.
 * A scheduled run is always on the default branch (GitHub runs schedules there), so it passes
 * the default without a payload naming one.
 */
export function untrustedRef(run: RunRef): string | undefined {
  if (run.trustedRefs.length > 0) {
    if (run.ref && refMatches(run.ref, run.trustedRefs)) return undefined;
    return `${run.ref || 'the run\'s ref (GITHUB_REF is not set)'} is not in trusted-refs (${run.trustedRefs.join(', ')})`;
  }
  if (run.eventName === 'schedule' && (!run.ref || !run.defaultBranch || run.ref === `refs/heads/${run.defaultBranch}`)) return undefined;
  if (!run.defaultBranch) return `the ${run.eventName} event's payload names no default branch to compare ${run.ref || 'the run\'s ref'} with: set trusted-refs`;
  if (run.ref === `refs/heads/${run.defaultBranch}`) return undefined;
  return `${run.ref || 'the run\'s ref (GITHUB_REF is not set)'} is not the default branch (refs/heads/${run.defaultBranch}), the only ref trusted while trusted-refs is not set`;
}

/** The repository's default branch, as the payload names it. */
export function defaultBranchOf(payload: object): string | undefined {
  const branch = (payload as { repository?: { default_branch?: unknown } }).repository?.default_branch;
  return typeof branch === 'string' && branch !== '' ? branch : undefined;
}
