import { readFile, stat } from 'node:fs/promises';
import { relative } from 'node:path';
import type { Command } from 'commander';
import { resourceModels } from '../../api/model.js';
import { buildReport, type Report } from '../../gitops/report/report.js';
import { parseManifests } from '../../gitops/source/manifests.js';
import { validateManifests, type DesiredObject } from '../../gitops/validate.js';
import { colourOn } from '../colour.js';
import { CliError, reportExitCode } from '../errors.js';
import { addGitopsFlags, addSourceFlags, checkOutput, formatReport, openClient, runOptions, sourceOptions, writeReports, type GitopsFlags } from '../gitops-flags.js';
import { addPolicyFlag, type WorkflowFlags } from '../workflow-flags.js';
import { camelName, policyFlag, pruneFlags, sourceFlags } from '../flag-specs.js';
import { keyDeliveryFromEnv } from '../../gitops/keys/github-secrets.js';
import { approvePlan, githubApiFromEnv } from '../../gitops/approvals/plan-approvals.js';
import { parsePullRequest, type PullRequestRef } from '../../gitops/approvals/reviews.js';
import { teamHolderNameWarnings } from '../../gitops/team-holder-names.js';
import { append } from '../../gitops/append.js';

type Flags = GitopsFlags & WorkflowFlags & { pullRequest?: string };

/** --pull-request: owner/repo#N or the pull request's URL. */
function pullRequestFlag(text: string): PullRequestRef {
  const pr = parsePullRequest(text);
  if (!pr) throw new CliError(`--pull-request must be owner/repo#NUMBER or the pull request's URL, not ${JSON.stringify(text)}`);
  return pr;
}

async function finish(report: Report, f: Flags): Promise<void> {
  process.stdout.write(formatReport(report, f.output, colourOn(process.stdout)));
  await writeReports(report, f.reportDir);
  process.exitCode = reportExitCode(report, f.detailedExitcode === true);
}

/** What validate read: its report and the kinds of the objects it checked. */
interface Checked {
  report: Report;
  kinds: string[];
}

/** Validate files given one by one (a folder goes through the source loader). */
async function validatePaths(paths: string[], f: Flags): Promise<Checked> {
  const models = Object.values(resourceModels(f.apiGroup));
  let errors: Report['errors'] = [];
  const desired: DesiredObject[] = [];
  const kinds: string[] = [];
  const dirWarnings: NonNullable<Report['warnings']> = [];
  for (const path of paths) {
    if ((await stat(path).catch(() => undefined))?.isDirectory()) {
      const { validateSource } = await import('../../gitops/reconcile.js');
      const { report, loaded } = await validateSource({ ...sourceOptions(f), source: path }, `${f.apiGroup}/v1`, f.policy);
      append(errors, report.errors);
      append(dirWarnings, report.warnings ?? []);
      append(kinds, loaded.manifests.map((m) => String(m.object.kind)));
      continue;
    }
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) {
      errors.push({ file: path, line: 1, column: 1, message: 'no such file' });
      continue;
    }
    const parsed = parseManifests(text, relative(process.cwd(), path) || path);
    append(kinds, parsed.manifests.map((m) => String(m.object.kind)));
    const checked = validateManifests(parsed.manifests, models);
    append(desired, checked.desired);
    append(append(errors, parsed.errors), checked.errors);
  }
  if (f.policy && desired.length > 0 && errors.length === 0) errors = await (await import('../../gitops/policy/evaluate.js')).checkPolicyDir(f.policy, desired);
  const warnings = [...dirWarnings, ...teamHolderNameWarnings(desired)];
  return { report: buildReport({ mode: 'validate', source: { id: 'files', description: paths.join(', ') }, target: '(none)', errors, ...(warnings.length ? { warnings } : {}) }), kinds };
}

/** `5 objects (3 Team, 2 OwnedAccessKey)`. */
function objectCount(kinds: string[]): string {
  const by = new Map<string, number>();
  for (const k of kinds) by.set(k, (by.get(k) ?? 0) + 1);
  const parts = [...by.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${n} ${k}${n === 1 ? '' : 's'}`);
  return `${kinds.length} object${kinds.length === 1 ? '' : 's'}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

/** An empty source is a mistake (a wrong --source or --path) far more often than an intent, as for kubectl apply -f. */
function noManifests(where: string, what: string): CliError {
  return new CliError(`no manifests found in ${where}: nothing to ${what} (files ending .yaml, .yml or .json, searched recursively${what === 'validate' ? '' : '; --allow-empty accepts an empty source'})`);
}

export function registerGitops(program: Command): void {
  addPolicyFlag(
    addSourceFlags(
      program
        .command('validate')
        .description('check manifests against the schemas and policies (no server is asked); errors print as file:line:col')
        .argument('[paths...]', 'files or folders (default: --source)'),
    ),
  ).action(async (paths: string[], f: Flags) => {
    checkOutput(f.output);
    const { report, kinds } =
      paths.length > 0
        ? await validatePaths(paths, f)
        : await (await import('../../gitops/reconcile.js')).validateSource(sourceOptions(f), `${f.apiGroup}/v1`, f.policy).then(({ report, loaded }) => ({ report, kinds: loaded.manifests.map((m) => String(m.object.kind)) }));
    if (report.errors.length === 0 && kinds.length === 0) throw noManifests(report.source.description, 'validate');
    if (f.output === 'text' && report.errors.length === 0) {
      const from = paths.length > 0 ? report.source.description : `source ${report.source.id} (${report.source.description})`;
      // What only a server can decide (a team:<name> user new to it) is a warning here, as a compiler's.
      for (const w of report.warnings ?? []) process.stderr.write(`${w.file}:${w.line}:${w.column}: warning: ${w.message}\n`);
      process.stdout.write(`The manifests are valid: checked ${objectCount(kinds)} from ${from}.\n`);
      await writeReports(report, f.reportDir);
      return;
    }
    await finish(report, f);
  });

  for (const mode of ['plan', 'apply'] as const) {
    const cmd = addPolicyFlag(
      addGitopsFlags(
        program
          .command(mode)
          .description(mode === 'plan' ? 'show what apply would change, and who changed what drifted' : 'make the live objects equal to the manifests'),
      ),
    );
    if (mode === 'plan') {
      cmd.option('--out <file>', 'save the plan, for apply --plan to apply exactly it (or nothing, if anything it read changed)');
      cmd.option('--pull-request <owner/repo#N>', "check the approvals the changed Teams ask for against this pull request's reviews (GITHUB_API_URL, GITHUB_TOKEN); a saved plan checks them again at apply");
    }
    else cmd.option('--plan <file>', 'apply this saved plan (from plan --out) instead of reading --source');
    cmd.action(async (f: Flags) => {
      if (f.plan) {
        // A saved plan is applied as reviewed: what it was made from cannot be changed at apply time.
        const fixed = [...sourceFlags, policyFlag, ...pruneFlags].filter((s) => cmd.getOptionValueSource(camelName(s.name)) === 'cli');
        if (fixed.length > 0) throw new CliError(`--plan applies the saved plan as it was reviewed: ${fixed.map((s) => `--${s.name}`).join(', ')} were fixed when it was made`);
      }
      checkOutput(f.output);
      const run = runOptions(f);
      // What plan and apply need (the planner, the writers, a client) loads only when one of them runs.
      const [{ reconcile }, { applyPlanFile, writeSavedPlan }] = await Promise.all([import('../../gitops/reconcile.js'), import('../../gitops/saved/plan-file.js')]);
      const client = await openClient(f);
      const abort = new AbortController();
      const stop = () => abort.abort();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      const progress =
        mode === 'apply' && process.stderr.isTTY
          ? (done: number, total: number) => process.stderr.write(`\rapplying ${done}/${total}${done === total ? '\n' : ''}`)
          : undefined;
      try {
        const applyOpts = {
          concurrency: run.concurrency,
          ...(run.keyDir ? { keyDir: run.keyDir } : {}),
          ...keyDeliveryFromEnv(),
          ...(progress ? { onProgress: progress } : {}),
          signal: abort.signal,
        };
        if (f.plan) return await finish(await applyPlanFile(f.plan, client, applyOpts), f);
        const reconciled = await reconcile({
          mode,
          client,
          source: sourceOptions(f),
          prune: run.prune,
          allowEmpty: run.allowEmpty,
          maxPrune: run.maxPrune,
          ...(run.warnExpiryMs ? { warnExpiryMs: run.warnExpiryMs } : {}),
          ...(run.warnUnusedMs ? { warnUnusedMs: run.warnUnusedMs } : {}),
          ...applyOpts,
          ...(f.policy ? { policyDir: f.policy } : {}),
        });
        // Nothing was written for an empty source unless --allow-empty; a refusal says more than this.
        const { loaded } = reconciled;
        if (loaded.manifests.length === 0 && reconciled.report.outcome === 'clean' && f.allowEmpty !== true) throw noManifests(loaded.description, mode);
        const pr = f.pullRequest ? pullRequestFlag(f.pullRequest) : undefined;
        const approvals = pr ? await approvePlan(reconciled, pr, githubApiFromEnv()) : undefined;
        await finish(reconciled.report, f);
        if (f.out) {
          const unsaved = await writeSavedPlan(f.out, reconciled, client, approvals);
          process.stderr.write(unsaved ? `${unsaved}\n` : `Saved the plan to ${f.out}; apply exactly it with: teamkeys apply --plan ${f.out}\n`);
        }
      } finally {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        await client.close();
      }
    });
  }
}
