/** Saved plan files, for the CLI (plan --out, apply --plan) and the Action (input plan-file) alike. */
import { readFile } from 'node:fs/promises';
import { removeNoFollow, writeNoFollow } from '../no-follow.js';
import type { ApiClient } from '../../client/types.js';
import { applySavedPlan, type SavedApplyOptions } from './saved-apply.js';
import { sourceFolders } from '../keys/file-sink.js';
import { parseSavedPlan, savePlan } from './saved-plan.js';
import type { Reconciled } from '../reconcile.js';
import type { SavedApprovals } from '../approvals/plan-approvals.js';
import { buildReport, isFailedOutcome, type Report } from '../report/report.js';

/**
 * Writes the saved plan when there is one to save: a plan with errors, or refused, is not saved
 * (it could not be applied), and the file is not left behind from an earlier run.
 */
export async function writeSavedPlan(file: string, r: Reconciled, client: ApiClient, approvals?: SavedApprovals): Promise<string | undefined> {
  if (!r.plan || !r.desired || !r.live || isFailedOutcome(r.report.outcome)) {
    await removeNoFollow(file);
    return `no plan was saved to ${file}: the plan is ${r.report.outcome}`;
  }
  const saved = savePlan({ plan: r.plan, desired: r.desired, live: r.live, source: r.report.source, target: client.target, targetApiVersion: client.apiVersion, withheld: r.withheld === true, ...(approvals ? { approvals } : {}) });
  await writeNoFollow(file, `${JSON.stringify(saved, null, 2)}\n`, 0o600);
  return undefined;
}

/** apply --plan FILE: the saved plan's report, or an invalid report naming the file when it cannot be used. */
export async function applyPlanFile(file: string, client: ApiClient, opts: SavedApplyOptions): Promise<Report> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  const parsed = text === undefined ? `cannot read the plan file` : parseSavedPlan(text);
  if (typeof parsed === 'string') {
    return buildReport({ mode: 'apply', source: { id: '(saved plan)', description: file }, target: client.target, errors: [{ file, line: 1, column: 1, message: parsed }] });
  }
  // A saved plan does not say where its source was checked out: file: sinks are kept out of the
  // work tree it is applied from (where the plan was reviewed), as a run from the source would be.
  const files = parsed.actions.some((a) => a.keySecret?.startsWith('file:'));
  const refuse = files && !opts.fileSinks?.refuse ? await sourceFolders({ source: process.cwd() }) : undefined;
  return applySavedPlan(client, parsed, refuse ? { ...opts, fileSinks: { ...opts.fileSinks, refuse } } : opts);
}
