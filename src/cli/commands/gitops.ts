import { readFile, stat } from 'node:fs/promises';
import { relative } from 'node:path';
import type { Command } from 'commander';
import { resourceModels } from '../../api/model.js';
import { reconcile, validateSource } from '../../gitops/reconcile.js';
import { buildReport, type Report } from '../../gitops/report/report.js';
import { parseManifests } from '../../gitops/source/manifests.js';
import { validateManifests } from '../../gitops/validate.js';
import { reportExitCode } from '../errors.js';
import { addGitopsFlags, checkOutput, formatReport, openClient, runOptions, sourceOptions, writeReports, type GitopsFlags } from '../gitops-flags.js';

async function finish(report: Report, f: GitopsFlags): Promise<void> {
  process.stdout.write(formatReport(report, f.output));
  await writeReports(report, f.reportDir);
  process.exitCode = reportExitCode(report, f.detailedExitcode === true);
}

/** Validate files given one by one (a folder goes through the source loader). */
async function validatePaths(paths: string[], f: GitopsFlags): Promise<Report> {
  const models = Object.values(resourceModels(f.apiGroup));
  let errors: Report['errors'] = [];
  for (const path of paths) {
    if ((await stat(path).catch(() => undefined))?.isDirectory()) {
      const { report } = await validateSource({ ...sourceOptions(f), source: path }, `${f.apiGroup}/v1`);
      errors = [...errors, ...report.errors];
      continue;
    }
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) {
      errors.push({ file: path, line: 1, column: 1, message: 'no such file' });
      continue;
    }
    const parsed = parseManifests(text, relative(process.cwd(), path) || path);
    errors = [...errors, ...parsed.errors, ...validateManifests(parsed.manifests, models).errors];
  }
  return buildReport({ mode: 'validate', source: { id: 'files', description: paths.join(', ') }, target: '(none)', errors });
}

export function registerGitops(program: Command): void {
  addGitopsFlags(
    program
      .command('validate')
      .description('check manifests against the schemas (no server is asked); errors print as file:line:col')
      .argument('[paths...]', 'files or folders (default: --source)'),
  ).action(async (paths: string[], f: GitopsFlags) => {
    checkOutput(f.output);
    const report = paths.length > 0 ? await validatePaths(paths, f) : (await validateSource(sourceOptions(f), `${f.apiGroup}/v1`)).report;
    if (f.output === 'text' && report.errors.length === 0) {
      process.stdout.write('The manifests are valid.\n');
      await writeReports(report, f.reportDir);
      return;
    }
    await finish(report, f);
  });

  for (const mode of ['plan', 'apply'] as const) {
    addGitopsFlags(
      program
        .command(mode)
        .description(mode === 'plan' ? 'show what apply would change, and who changed what drifted' : 'make the live objects equal to the manifests'),
    ).action(async (f: GitopsFlags) => {
      checkOutput(f.output);
      const run = runOptions(f);
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
        const { report } = await reconcile({
          mode,
          client,
          source: sourceOptions(f),
          ...run,
          ...(progress ? { onProgress: progress } : {}),
          signal: abort.signal,
        });
        await finish(report, f);
      } finally {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        await client.close();
      }
    });
  }
}
