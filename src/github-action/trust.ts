/**
 * Whether a run of the Action may trust its checkout, decided from the event and failing closed:
 * only the events in the trusted-events input (default push, workflow_dispatch, schedule) run on
 * reviewed code. Every other event (pull_request, pull_request_target, pull_request_review,
 * issue_comment, workflow_run, merge_group, and any event GitHub adds later) is treated as a pull
 * request: policies from the base commit, live values withheld, no apply, no key delivered.
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
    throw new Error(`trusted-events may not list ${refused.join(', ')}: on such events the checkout or its payload comes from a pull request's author (list push, workflow_dispatch, schedule or release)`);
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
