/**
 * The GitHub Action's entry, bundled into dist-action/index.mjs: inputs (INPUT_*) -> validate /
 * plan / apply against a server -> outputs (GITHUB_OUTPUT), the Markdown report as the job
 * summary, the first errors as annotations, and the plan as one pull request comment.
 * It never opens the embedded store: the Action talks to a server, so no native module is needed.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import * as core from '@actions/core';
import * as github from '@actions/github';
import { defaultGroup } from '../api/resources.js';
import { HttpClient } from '../client/http.js';
import { applyPlanFile, writeSavedPlan } from '../gitops/saved/plan-file.js';
import { reconcile, validateSource, type Reconciled } from '../gitops/reconcile.js';
import { approvePlan, type SavedApprovals } from '../gitops/approvals/plan-approvals.js';
import { renderMarkdown } from '../gitops/report/markdown.js';
import { isFailedOutcome, workCount, type Report } from '../gitops/report/report.js';
import { writeReports } from '../gitops/report/write.js';
import { keyDeliveryFromEnv } from '../gitops/keys/github-secrets.js';
import { parseOwners } from '../gitops/keys/owner-allow-list.js';
import type { PolicyRef, PolicySource } from '../gitops/policy/at-ref.js';
import { durationError, durationMs, formatDuration } from '../duration.js';
import { defaultReconcileOptions as defaults } from '../gitops/reconcile-defaults.js';
import { visible } from '../gitops/report/hidden-text.js';
import { commentBody, commentMarker, summaryBody, upsertComment } from './comment.js';
import { authMode, serverKey } from './auth.js';
import { baseCommitOf, defaultBranchOf, isTrustedEvent, parseTrustedEvents, parseTrustedRefs, untrustedRef } from './trust.js';
import { changeOf, keysInChangedFiles } from './changed-files.js';
import { refuseLinkedFolder } from '../gitops/no-follow.js';

/** GitHub shows at most this many error annotations per step. */
const maxAnnotations = 10;

/** An input by its action.yml name (the runner passes INPUT_NAME-WITH-DASHES; underscores are accepted too). */
function input(name: string, fallback = ''): string {
  const value = core.getInput(name) || process.env[`INPUT_${name.replace(/-/g, '_').toUpperCase()}`] || '';
  return value.trim() || fallback;
}

/** A duration input (14d, 90d): refused before anything is read or written when it is not one. */
function duration(name: string, fallback: string): number {
  const value = input(name, fallback);
  const ms = durationMs(value);
  if (ms === undefined) throw new Error(durationError(`the ${name} input`, value));
  return ms;
}

/**
 * A whole-number input (max-prune): refused before anything is read or written when it is not one.
 * Read with Number(), "unlimited" or "50," was NaN, which no count exceeds: no limit at all (found
 * by a review). The CLI's --max-prune refuses the same values.
 */
function wholeNumberInput(name: string, fallback: string): number {
  const value = input(name, fallback);
  if (!/^\d{1,9}$/.test(value)) throw new Error(`the ${name} input must be a whole number of at least 0, not ${JSON.stringify(value)}`);
  return Number(value);
}

const flag = (name: string, fallback = 'false') => ['true', 'yes', '1'].includes(input(name, fallback).toLowerCase());

/** A client of the server input, with the token input's key or, with auth: oidc, one minted for this job (auth.ts). */
async function openServer(group: string): Promise<HttpClient> {
  const server = input('server');
  if (!server) throw new Error('the server input is required for plan and apply (the management API URL)');
  const ca = input('ca-cert') ? Buffer.from(input('ca-cert')) : undefined;
  const token = await serverKey({ auth: input('auth', 'token'), server, token: input('token'), audience: input('oidc-audience', 'teamkeys'), credential: input('federated-credential'), ...(ca ? { ca } : {}) });
  return new HttpClient({ server, token, group, ...(ca ? { ca } : {}) });
}

/** Keys the server generates go to the GitHub secrets their manifests name, with the github-token input. */
const keyDelivery = () => keyDeliveryFromEnv({ ...process.env, GITHUB_TOKEN: input('github-token') || process.env.GITHUB_TOKEN });

/** How far the run is trusted (trust.ts): its event, and its ref when the event is trusted. */
interface RunTrust {
  event: string;
  trustedEvent: boolean;
  /** Why a trusted event's run is still untrusted (its ref), if it is. */
  refRefused: string | undefined;
  trusted: boolean;
}

/**
 * Where an untrusted run (a pull request, trust.ts) reads its policies when policy-ref is not given:
 * the pull request's or merge group's base commit; for a trusted event on an untrusted ref, the
 * default branch as origin has it (a local branch of that name may be the job's own, or stale).
 * Undefined when the payload names neither: the checkout is never read for policies.
 */
function untrustedPolicyRef(trust: RunTrust): { at: Omit<PolicyRef, 'dir'>; shown: string } | undefined {
  const base = baseCommitOf(github.context.payload);
  if (base) return { at: { ref: base }, shown: 'policies from the base commit' };
  const branch = trust.trustedEvent ? defaultBranchOf(github.context.payload) : undefined;
  if (branch) return { at: { ref: `refs/heads/${branch}`, fromOrigin: true, named: 'the default branch' }, shown: 'policies from the default branch' };
  return undefined;
}

/**
 * The policy folder: from git at `policy-ref` when given; on a trusted run from the checkout; on an
 * untrusted one at untrustedPolicyRef, so the change cannot delete or weaken a policy it breaks.
 */
function policySource(workspace: string, trust: RunTrust): PolicySource | undefined {
  if (!input('policy')) return undefined;
  const dir = resolve(workspace, input('policy'));
  const asked = input('policy-ref');
  if (asked) return { dir, ref: asked };
  if (trust.trusted) return dir;
  const untrusted = untrustedPolicyRef(trust);
  if (untrusted) return { dir, ...untrusted.at };
  if (trust.refRefused) throw new Error(`this ${trust.event} run is not trusted (${trust.refRefused}) and the payload names no default branch to read policies from: set the policy-ref input to the ref policies are read from, or trusted-refs`);
  throw new Error(`the ${trust.event} event is not trusted (trusted-events) and names no base commit: set the policy-ref input to the ref policies are read from`);
}

/** Where an untrusted run reads its policies, as its log says. */
function policiesShown(trust: RunTrust): string {
  return (!input('policy-ref') && untrustedPolicyRef(trust)?.shown) || 'policies from policy-ref';
}

/** The ref the run checked out: GITHUB_REF, else (outside a runner) a push payload's ref. */
function runRef(): string {
  const fromPayload = (github.context.payload as { ref?: unknown }).ref;
  return github.context.ref || (typeof fromPayload === 'string' ? fromPayload : '');
}

/** The owners key-secret may name: the key-secret-owners input, else the owner of the repository the workflow runs in. */
function keySecretOwners(): { keySecretOwners?: string[] } {
  const listed = parseOwners(input('key-secret-owners'));
  if (listed.length > 0) return { keySecretOwners: listed };
  const owner = process.env.GITHUB_REPOSITORY?.split('/')[0];
  return owner ? { keySecretOwners: [owner] } : {};
}

/** The report of the command the inputs ask for (and the saved plan written or applied). */
async function runCommand(command: string, workspace: string, trust: RunTrust): Promise<Report> {
  const { trusted } = trust;
  const maxPrune = wholeNumberInput('max-prune', String(defaults.maxPrune));
  const group = input('api-group', defaultGroup);
  const policyDir = policySource(workspace, trust);
  const planFile = input('plan-file') ? resolve(workspace, input('plan-file')) : undefined;
  const source = {
    source: resolve(workspace, input('source', '.')),
    ...(input('path') ? { path: input('path') } : {}),
    ...(input('source-id') ? { sourceId: input('source-id') } : {}),
  };
  if (command === 'validate') return (await validateSource(source, `${group}/v1`, policyDir)).report;
  const warn = { warnExpiryMs: duration('warn-expiry', formatDuration(defaults.warnExpiryMs)), warnUnusedMs: duration('warn-unused', formatDuration(defaults.warnUnusedMs)) };
  const client = await openServer(group);
  try {
    if (command === 'apply' && planFile) return await applyPlanFile(planFile, client, { concurrency: defaults.concurrency, ...keyDelivery() });
    const reconciled = await reconcile({
      mode: command as 'plan' | 'apply',
      client,
      source,
      prune: flag('prune'),
      allowEmpty: false,
      maxPrune,
      concurrency: defaults.concurrency,
      ...warn,
      // An untrusted event is a pull request's: its comment shows live values only for fields its manifests name.
      withholdUnnamedLiveValues: !trusted,
      ...keySecretOwners(),
      ...(policyDir ? { policyDir } : {}),
      ...keyDelivery(),
    });
    const approvals = command === 'plan' ? await pullRequestApprovals(reconciled) : undefined;
    if (command === 'plan' && planFile) {
      const unsaved = await writeSavedPlan(planFile, reconciled, client, approvals);
      if (unsaved) core.warning(unsaved);
      else core.setOutput('plan-file', planFile);
    }
    return reconciled.report;
  } finally {
    await client.close();
  }
}

/**
 * require-approvals on a pull request: the approvals the changed Teams ask for, read from the pull
 * request's reviews through the runner's GitHub API (GITHUB_API_URL) with github-token.
 */
async function pullRequestApprovals(reconciled: Reconciled): Promise<SavedApprovals | undefined> {
  const pr = github.context.payload.pull_request;
  if (!flag('require-approvals') || !pr) return undefined;
  const token = input('github-token') || process.env.GITHUB_TOKEN;
  return approvePlan(reconciled, { ...github.context.repo, number: pr.number }, { url: github.context.apiUrl, ...(token ? { token } : {}) });
}

/**
 * Where report.json and report.md go: the report-dir input (from the workspace), else the runner's
 * temporary folder, outside the checkout, so a later step never finds them among the manifests
 * and no step commits them by accident.
 */
function reportDirOf(workspace: string): string {
  const asked = input('report-dir');
  return asked ? resolve(workspace, asked) : join(process.env.RUNNER_TEMP || tmpdir(), 'teamkeys-report');
}

/** A path as a log names it: from the workspace when inside it, else whole. */
const shownPath = (workspace: string, path: string) => (relative(workspace, path).startsWith('..') ? path : relative(workspace, path) || '.');

/** Edits (or creates) this source's comment on the pull request the run is for. */
async function comment(report: Report, markdown: string): Promise<void> {
  const pr = github.context.payload.pull_request;
  if (!pr) return core.info('not a pull_request event: no comment');
  const token = input('github-token');
  if (!token) return core.warning('no github-token: the plan was not commented on the pull request');
  const { serverUrl, runId } = github.context;
  const summaryUrl = process.env.GITHUB_REPOSITORY && runId ? `${serverUrl}/${process.env.GITHUB_REPOSITORY}/actions/runs/${runId}` : undefined;
  const body = commentBody(report.source.id, markdown, summaryUrl);
  try {
    const done = await upsertComment({ token, ...github.context.repo, issueNumber: pr.number }, commentMarker(report.source.id), body);
    core.info(`pull request comment ${done.action}: ${done.url} (id ${done.id})`);
  } catch (err) {
    // The plan stands without its comment; a token without pull-requests: write should not hide it.
    core.warning(`could not comment on the pull request (does the job have permissions: pull-requests: write?): ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * A change holding a key value is refused before anything is planned or applied: the report of a
 * validation with those files' errors added (so the run is `invalid`, annotated at each file:line).
 */
async function refuseKeysInChanges(workspace: string, trusted: boolean): Promise<Report | undefined> {
  const change = changeOf(github.context.payload, trusted);
  if (!change) return undefined;
  const { errors, scope } = await keysInChangedFiles(workspace, change.base, change.fallback);
  core.info(`scanned ${scope} for access keys: ${errors.length} found`);
  if (errors.length === 0) return undefined;
  const group = input('api-group', defaultGroup);
  const sourceDir = resolve(workspace, input('source', '.'));
  const source = { source: sourceDir, ...(input('path') ? { path: input('path') } : {}), ...(input('source-id') ? { sourceId: input('source-id') } : {}) };
  const { report } = await validateSource(source, `${group}/v1`);
  // A manifest's own finding (named from the source folder) is not repeated.
  const where = (path: string, e: { line: number; column: number }) => `${path}:${e.line}:${e.column}`;
  const known = new Set(report.errors.map((e) => where(resolve(sourceDir, e.file), e)));
  return { ...report, outcome: 'invalid', errors: [...errors.filter((e) => !known.has(where(resolve(workspace, e.file), e))), ...report.errors] };
}

/** Why a failed run failed, as the step's failure names it. */
function failureMessage(report: Report): string {
  if (report.outcome === 'invalid') return `${report.errors.length} error(s) in the manifests or policies`;
  if (report.outcome === 'refused') return report.refused ?? 'refused';
  return `${report.summary.failed} write(s) failed`;
}

async function run(): Promise<void> {
  // Masked before anything can print them.
  for (const secret of [input('token'), input('github-token'), process.env.GITHUB_TOKEN]) if (secret) core.setSecret(secret);
  const command = input('command', 'plan');
  authMode(input('auth', 'token')); // a typo in auth is refused before anything runs, validate too
  if (!['validate', 'plan', 'apply'].includes(command)) throw new Error(`command must be validate, plan or apply, not "${command}"`);
  // A pull request's manifests are its author's: applying them would rotate keys and send their
  // values wherever the pull request says. Apply runs only on a trusted event (push, schedule).
  const event = github.context.eventName;
  const trustedEvent = isTrustedEvent(event, parseTrustedEvents(input('trusted-events')));
  const trustedRefs = parseTrustedRefs(input('trusted-refs'));
  // Even a trusted event runs on unreviewed code when its ref is a feature branch (trust.ts).
  const refRefused = trustedEvent ? untrustedRef({ eventName: event, ref: runRef(), trustedRefs, defaultBranch: defaultBranchOf(github.context.payload) }) : undefined;
  const trust: RunTrust = { event, trustedEvent, refRefused, trusted: trustedEvent && !refRefused };
  if (command === 'apply' && !trustedEvent) {
    throw new Error(`command: apply is refused on a ${event || '(unnamed)'} event: it is not in trusted-events, so its manifests are treated as a pull request's, not reviewed yet (apply would rotate keys and deliver them where the pull request says); run plan on pull requests and apply on push or schedule`);
  }
  if (command === 'apply' && refRefused) {
    throw new Error(`command: apply is refused on this ${event} run: ${refRefused}, so its manifests are treated as a pull request's, not reviewed yet (apply would rotate keys and deliver them where that ref says); apply from a trusted ref, or list the refs you apply from in trusted-refs`);
  }
  if (!trustedEvent) core.info(`the ${event || '(unnamed)'} event is not in trusted-events: pull-request mode (${policiesShown(trust)}, live values withheld, no apply)`);
  else if (refRefused) core.info(`the ${event} run's ref is not trusted: ${refRefused}: pull-request mode (${policiesShown(trust)}, live values withheld, no apply)`);
  const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
  // The source folder and path are the checkout's, which a pull request writes: one committed as a
  // link would have the loader read wherever it points ($HOME, /) into the report (found by a review).
  const sourceDir = resolve(workspace, input('source', '.'));
  await refuseLinkedFolder(sourceDir, 'the source folder', { anchor: workspace, fix: 'a source folder committed as a link is not read' });
  if (input('path')) await refuseLinkedFolder(resolve(sourceDir, input('path')), 'the source path', { anchor: workspace, fix: 'a path committed as a link is not read' });
  // A push to a feature branch is scanned since its previous tip, as before trusted-refs: its
  // payload is GitHub's, not a pull request's, so its `before` is no author's choice.
  const report = await refuseKeysInChanges(workspace, trustedEvent) ?? (await runCommand(command, workspace, trust));
  const reportDir = reportDirOf(workspace);
  await writeReports(report, reportDir);
  const markdown = renderMarkdown(report);
  const unannotated = report.errors.length - maxAnnotations;
  const more = unannotated > 0 ? `\n${unannotated} more error(s) are not annotated (GitHub shows ${maxAnnotations} per step); all ${report.errors.length} are listed above.\n` : '';
  await core.summary.addRaw(summaryBody(markdown + more, join(reportDir, 'report.md'))).write();
  // Annotations name files from the repository root: manifests are named from the source folder,
  // policy files from the workspace.
  for (const e of report.errors.slice(0, maxAnnotations)) {
    const file = relative(workspace, existsSync(resolve(sourceDir, e.file)) ? resolve(sourceDir, e.file) : resolve(workspace, e.file));
    // Annotations are text from manifests too: hidden and look-alike characters shown as escapes.
    core.error(visible(e.message), { title: 'teamkeys', file: visible(file), startLine: e.line, startColumn: e.column });
  }
  if (flag('comment', 'true')) await comment(report, markdown);
  const s = report.summary;
  const changes = workCount(s);
  core.setOutput('outcome', report.outcome);
  core.setOutput('changes', String(changes));
  core.setOutput('drift', String(s.drifted));
  core.setOutput('report-json', join(reportDir, 'report.json'));
  core.setOutput('report-markdown', join(reportDir, 'report.md'));
  core.info(`teamkeys ${command}: ${report.outcome}; ${changes} change(s), ${s.drifted} drifted, report in ${shownPath(workspace, reportDir)}`);
  if (isFailedOutcome(report.outcome)) core.setFailed(visible(failureMessage(report)));
  else if (report.approvals && report.approvals.missing.length > 0) core.setFailed(visible(`approval missing on pull request ${report.approvals.pullRequest}: ${report.approvals.missing.join('; ')}`));
  else if (flag('fail-on-drift') && s.drifted > 0) core.setFailed(`${s.drifted} object(s) drifted from git (see the job summary)`);
}

run().catch((err: unknown) => core.setFailed(err instanceof Error ? err.message : String(err)));
