import { readFile, stat } from 'node:fs/promises';
import { relative } from 'node:path';
import type { Command } from 'commander';
import { resourceModels } from '../../api/model.js';
import { reconcile, validateSource } from '../../gitops/reconcile.js';
import { buildReport, type Report } from '../../gitops/report/report.js';
import { parseManifests } from '../../gitops/source/manifests.js';
import { validateManifests, type DesiredObject } from '../../gitops/validate.js';
import { applyPlanFile, writeSavedPlan } from '../../gitops/plan-file.js';
import { checkPolicyDir } from '../../gitops/policy/evaluate.js';
import { CliError } from '../errors.js';
import { addGitopsFlags, count, formatReport, openClient, sourceOptions, writeReports, type GitopsFlags } from '../gitops-flags.js';
import { addPolicyFlag, type WorkflowFlags } from '../workflow-flags.js';

type Flags = GitopsFlags & WorkflowFlags;

/** Exit codes: 0 done or nothing to do; 2 changes or drift (--detailed-exitcode); 1 anything wrong. */
function exitCode(report: Report, detailed: boolean): number {
  if (['invalid', 'refused', 'failed'].includes(report.outcome)) return 1;
  return detailed && ['changes', 'drifted'].includes(report.outcome) ? 2 : 0;
}

async function finish(report: Report, f: Flags): Promise<void> {
  process.stdout.write(formatReport(report, f.output));
  await writeReports(report, f.reportDir);
  process.exitCode = exitCode(report, f.detailedExitcode === true);
}

/** Validate files given one by one (a folder goes through the source loader). */
async function validatePaths(paths: string[], f: Flags): Promise<Report> {
  const models = Object.values(resourceModels(f.apiGroup));
  let errors: Report['errors'] = [];
  const desired: DesiredObject[] = [];
  for (const path of paths) {
    if ((await stat(path).catch(() => undefined))?.isDirectory()) {
      const { report } = await validateSource({ ...sourceOptions(f), source: path }, `${f.apiGroup}/v1`, f.policy);
      errors = [...errors, ...report.errors];
      continue;
    }
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) {
      errors.push({ file: path, line: 1, column: 1, message: 'no such file' });
      continue;
    }
    const parsed = parseManifests(text, relative(process.cwd(), path) || path);
    const checked = validateManifests(parsed.manifests, models);
    desired.push(...checked.desired);
    errors = [...errors, ...parsed.errors, ...checked.errors];
  }
  if (f.policy && desired.length > 0 && errors.length === 0) errors = await checkPolicyDir(f.policy, desired);
  return buildReport({ mode: 'validate', source: { id: 'files', description: paths.join(', ') }, target: '(none)', errors });
}

export function registerGitops(program: Command): void {
  addPolicyFlag(
    addGitopsFlags(
      program
        .command('validate')
        .description('check manifests against the schemas and policies (no server is asked); errors print as file:line:col')
        .argument('[paths...]', 'files or folders (default: --source)'),
    ),
  ).action(async (paths: string[], f: Flags) => {
    const report = paths.length > 0 ? await validatePaths(paths, f) : (await validateSource(sourceOptions(f), `${f.apiGroup}/v1`, f.policy)).report;
    if (f.output === 'text' && report.errors.length === 0) {
      process.stdout.write('The manifests are valid.\n');
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
    if (mode === 'plan') cmd.option('--out <file>', 'save the plan, for apply --plan to apply exactly it (or nothing, if anything it read changed)');
    else cmd.option('--plan <file>', 'apply this saved plan (from plan --out) instead of reading --source');
    cmd.action(async (f: Flags) => {
      if (f.plan) {
        // A saved plan is applied as reviewed: what it was made from cannot be changed at apply time.
        const fixed = ['source', 'ref', 'path', 'sourceId', 'policy', 'prune', 'allowEmpty', 'maxPrune'].filter((o) => cmd.getOptionValueSource(o) === 'cli');
        if (fixed.length > 0) throw new CliError(`--plan applies the saved plan as it was reviewed: ${fixed.map((o) => `--${o.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} were fixed when it was made`, 2);
      }
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
          concurrency: count('--concurrency', f.concurrency, 1),
          ...(f.keyDir ? { keyDir: f.keyDir } : {}),
          ...(progress ? { onProgress: progress } : {}),
          signal: abort.signal,
        };
        if (f.plan) return await finish(await applyPlanFile(f.plan, client, applyOpts), f);
        const reconciled = await reconcile({
          mode,
          client,
          source: sourceOptions(f),
          prune: f.prune === true,
          allowEmpty: f.allowEmpty === true,
          maxPrune: count('--max-prune', f.maxPrune),
          ...applyOpts,
          ...(f.policy ? { policyDir: f.policy } : {}),
        });
        await finish(reconciled.report, f);
        if (f.out) {
          const unsaved = await writeSavedPlan(f.out, reconciled, client);
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
