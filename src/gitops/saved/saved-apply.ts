/**
 * `apply --plan FILE`: applies a saved plan exactly, or nothing. Every object the plan read is
 * read again first; if one changed (its content digest or uid differs), appeared, or vanished,
 * the whole plan is refused with those objects named, as `terraform apply PLANFILE` refuses a
 * stale plan. A write racing in after that check still loses: updates test the resourceVersion,
 * deletes carry the uid, creates fail on a name taken, and no write is re-planned.
 */
import type { ApiClient } from '../../client/types.js';
import { buildReport, type Report } from '../report/report.js';
import { contentDigest, type ObjectRead, type SavedPlan } from './saved-plan.js';
import type { PlanStep } from '../plan/plan.js';
import { listLive } from '../read-live.js';
import { keptDependents } from '../team-references.js';
import { applyPlan, type ApplyOptions } from '../apply/apply.js';
import { approvalRefusal } from '../approvals/check.js';
import { approvalsOf, githubApiFromEnv } from '../approvals/plan-approvals.js';
import type { GitHubApi } from '../approvals/reviews.js';

/** A saved plan is applied as planned: a conflict refuses it rather than planning again. */
export type SavedApplyOptions = Omit<ApplyOptions, 'replan'> & {
  /** Where a plan made for a pull request reads its approvals again (default: gitops/approvals/plan-approvals.ts). */
  github?: GitHubApi;
};

/** Why one object no longer matches what the plan read, or undefined when it still does. */
function staleness(read: ObjectRead, live: Awaited<ReturnType<ApiClient['get']>>): string | undefined {
  const id = `${read.kind}/${read.name}`;
  if (read.absent) return live ? `${id} was created since the plan` : undefined;
  if (!live) return `${id} was deleted since the plan`;
  if (live.metadata.uid !== read.uid) return `${id} was deleted and created again since the plan`;
  if (live.metadata.resourceVersion === read.resourceVersion || contentDigest(live) === read.digest) return undefined;
  return `${id} changed since the plan (resourceVersion ${read.resourceVersion} -> ${live.metadata.resourceVersion})`;
}

/** The action with its guard moved to the version just checked (only status changed since). */
function reguard(action: PlanStep, resourceVersion: string | undefined): PlanStep {
  if (!resourceVersion) return action;
  if (action.type === 'update' && action.patch) {
    return { ...action, patch: action.patch.map((op, i) => (i === 0 ? { ...(op as object), value: resourceVersion } : op)) };
  }
  if (action.type === 'replace' && action.body) return { ...action, body: { ...action.body, metadata: { ...action.body.metadata, resourceVersion } } };
  if (action.type === 'delete' && action.preconditions) return { ...action, preconditions: { ...action.preconditions, resourceVersion } };
  return action;
}

export async function applySavedPlan(client: ApiClient, saved: SavedPlan, opts: SavedApplyOptions): Promise<Report> {
  const base = { mode: 'apply' as const, source: saved.source, target: client.target };
  const refuse = (why: string) => buildReport({ ...base, errors: [], plan: { sourceId: saved.source.id, actions: saved.actions, refused: why } });
  if (saved.targetApiVersion !== client.apiVersion) return refuse(`the plan was made for ${saved.targetApiVersion}, not ${client.apiVersion} (--api-group)`);
  if (saved.target !== client.target) return refuse(`the plan was made against ${saved.target}, not ${client.target}: apply it to the target it was made for`);
  // A plan made for a pull request is applied only with the approvals the Teams ask for, read now.
  let approvals: Report['approvals'];
  if (saved.approvals) {
    approvals = await approvalsOf(saved.approvals.pullRequest, opts.github ?? githubApiFromEnv(), saved.approvals.requirements);
    const missing = approvalRefusal(approvals);
    if (missing) return { ...refuse(`${missing}. Nothing was written`), approvals };
    // Approvals are of the head commit as it is now: they stand for this plan only if it was made of that commit.
    const planned = saved.approvals.headSha;
    if (saved.approvals.requirements.length > 0 && planned !== approvals.headSha) {
      const why =
        planned === undefined
          ? 'the plan was saved before approvals were tied to the commit planned'
          : `the plan was made of ${planned ? `commit ${planned.slice(0, 12)}` : 'a commit not known (GitHub could not be read)'}, and its head is now ${approvals.headSha.slice(0, 12)}`;
      return { ...refuse(`the approvals of pull request ${approvals.pullRequest} are of its head, not of this plan: ${why}. Plan the head again. Nothing was written`), approvals };
    }
  }
  const stale: string[] = [];
  const versions = new Map<string, string | undefined>();
  for (const read of saved.reads) {
    const live = await client.get(read.plural, read.name);
    const why = staleness(read, live);
    if (why) stale.push(why);
    versions.set(`${read.plural}/${read.name}`, live?.metadata.resourceVersion);
  }
  if (stale.length > 0) {
    return refuse(`the plan is stale, nothing was written: ${stale.join('; ')}. Run teamkeys plan again and review the new plan`);
  }
  // A key or rule made for a team since the plan, which the plan prunes, would be collected with the
  // team: read now, as a fresh plan would, since the plan's reads name only its own objects (found
  // by a review).
  if (saved.actions.some((a) => a.plural === 'teams' && a.type === 'delete')) {
    // What the plan declares (any action but a delete) moves off the team or was refused at plan time.
    const declared = new Set(saved.actions.filter((a) => a.type !== 'delete').map((a) => `${a.plural}/${a.name}`));
    const kept = keptDependents(saved, (await listLive(client)).live, (plural, name) => declared.has(`${plural}/${name}`));
    if (kept) return refuse(`the plan is stale, nothing was written: ${kept}. Run teamkeys plan again and review the new plan`);
  }
  const actions = saved.actions.map((a) => reguard(a, versions.get(`${a.plural}/${a.name}`)));
  const changeSet = await applyPlan(client, actions, opts);
  const report = buildReport({ ...base, errors: [], plan: { sourceId: saved.source.id, actions }, changeSet });
  return approvals ? { ...report, approvals } : report;
}
