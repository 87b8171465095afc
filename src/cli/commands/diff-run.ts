/** What `teamkeys diff` runs: plan against the target, then each planned write as LIVE -> MERGED. */
import { FILE_HEADERS_ONLY, createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';
import type { KubeObject } from '../../api/types.js';
import { mergedObjects, type ObjectDiff } from '../../gitops/plan/merged.js';
import { reconcile } from '../../gitops/reconcile.js';
import { accessChangeText } from '../../gitops/report/access-change.js';
import { visible } from '../../gitops/report/hidden-text.js';
import { renderText } from '../../gitops/report/text.js';
import { colourOn, paintLines } from '../colour.js';
import { CliError } from '../errors.js';
import { openClient, runOptions, sourceOptions, type GitopsFlags } from '../gitops-flags.js';
import type { WorkflowFlags } from '../workflow-flags.js';

export type DiffFlags = Omit<GitopsFlags, 'output' | 'concurrency'> & WorkflowFlags & { concurrency?: string };

const text = (obj: KubeObject | undefined) => (obj ? stringify(obj) : '');

/** One object's unified diff; `/dev/null` stands for the side that does not exist, as git prints it. */
export function unifiedDiff(d: ObjectDiff): string {
  const id = `${d.kind}/${d.name}`;
  return createTwoFilesPatch(d.live ? `live/${id}` : '/dev/null', d.merged ? `git/${id}` : '/dev/null', text(d.live), text(d.merged), undefined, undefined, {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
  });
}

/** Prints the differences and returns the exit code: 0 none, 1 some; an invalid or refused plan is an error (2). */
export async function runDiff(f: DiffFlags): Promise<number> {
  const run = runOptions({ ...f, concurrency: '1' });
  const client = await openClient(f);
  try {
    const { report, plan, live } = await reconcile({
      mode: 'plan',
      client,
      source: sourceOptions(f),
      prune: run.prune,
      allowEmpty: run.allowEmpty,
      maxPrune: run.maxPrune,
      concurrency: 1,
      ...(f.policy ? { policyDir: f.policy } : {}),
    });
    if (report.outcome === 'invalid' || report.outcome === 'refused' || !plan || !live) {
      process.stderr.write(paintLines(renderText(report), colourOn(process.stderr)));
      throw new CliError(report.outcome === 'refused' ? 'the plan was refused: nothing to compare' : 'the manifests are invalid: nothing to compare');
    }
    for (const w of report.warnings ?? []) process.stderr.write(`${w.file}:${w.line}:${w.column}: warning: ${w.message}\n`);
    const diffs = mergedObjects(plan, live);
    // A rotation changes no field shown (the new key is made at apply time): said, not diffed.
    for (const d of diffs) if (d.note) process.stderr.write(`${d.kind}/${d.name}: ${d.note}\n`);
    const shown = diffs.filter((d) => text(d.live) !== text(d.merged));
    process.stdout.write(paintLines(shown.map(unifiedDiff).join(''), colourOn(process.stdout)));
    // Who gains and loses what: beside the diff, on stderr, so the diff itself stays a patch.
    const access = accessChangeText(report.accessChange);
    if (access.length > 0) process.stderr.write(`${access.map(visible).join('\n')}\n`);
    return diffs.length > 0 ? 1 : 0;
  } finally {
    await client.close();
  }
}
