/**
 * How a finished cycle is logged: at a level that matches what it means for an operator, with what
 * they need to act on it in the line itself. An invalid source, a refusal or failed writes are
 * errors (with the errors); drift is a warning naming what drifted and who made it; clean,
 * changes and applied are info. A log that says `"outcome":"invalid","msg":"reconciled"` at info
 * hides the one thing an operator must fix.
 */
import { notStartedNote } from '../gitops/apply/not-started.js';
import type { Report } from '../gitops/report/report.js';
import { attributionUnavailableText, driftText } from '../gitops/report/who.js';

/** Lines of detail a log line carries at most (the report holds them all). */
const maxDetails = 10;

export interface CycleLog {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  msg: string;
}

/** The log line of a cycle's report. */
export function cycleLog(report: Report): CycleLog {
  const base = { outcome: report.outcome, summary: report.summary, revision: report.source.revision, ...(report.attributionUnavailable ? { attribution: attributionUnavailableText(report.attributionUnavailable) } : {}) };
  if (report.outcome === 'invalid') {
    const errors = report.errors.slice(0, maxDetails).map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`);
    return { level: 'error', fields: { ...base, errorCount: report.errors.length, errors }, msg: `the source is invalid (${report.errors.length} error(s)); nothing was written, the last good state stays: ${errors[0]}` };
  }
  if (report.outcome === 'refused') return { level: 'error', fields: { ...base, refused: report.refused }, msg: `the sync was refused: ${report.refused}` };
  if (report.outcome === 'failed') {
    // Steps a stop (SIGTERM) came before count as failed in the summary, but nothing went wrong in them.
    const stopped = report.objects.filter((o) => o.result === 'Skipped' && o.note === notStartedNote).length;
    const failed = report.objects.filter((o) => o.result === 'Failed').slice(0, maxDetails).map((o) => `${o.kind}/${o.name}: ${o.error ?? 'failed'}`);
    const notStarted = stopped > 0 ? `the run was stopped before ${stopped} write(s); the next run makes them` : '';
    if (failed.length === 0 && stopped > 0) return { level: 'warn', fields: { ...base, notStarted: stopped }, msg: notStarted };
    return { level: 'error', fields: { ...base, failed, ...(stopped > 0 ? { notStarted: stopped } : {}) }, msg: `${report.summary.failed - stopped} write(s) failed: ${failed[0] ?? ''}${notStarted ? ` (and ${notStarted})` : ''}` };
  }
  const drift = report.objects
    .filter((o) => o.drift)
    .flatMap((o) => o.changes.filter((c) => c.drift).map((c) => `${o.kind}/${o.name}: ${driftText(c)}`))
    .slice(0, maxDetails);
  if (drift.length > 0) {
    const reverted = report.mode === 'apply' && report.outcome !== 'drifted';
    return { level: 'warn', fields: { ...base, drift }, msg: `${reverted ? 'reverted drift' : 'drift left in place (report-only; --self-heal reverts it)'}: ${drift[0]}` };
  }
  // Rotations are what an auditor asks the log for: which key, to where, and until when its old value worked.
  const rotated = report.objects.filter((o) => o.rotation?.previousValidUntil).map((o) => `${o.kind}/${o.name} -> ${o.rotation!.sink} (previous value until ${o.rotation!.previousValidUntil})`);
  const fields = rotated.length > 0 ? { ...base, rotated: rotated.slice(0, maxDetails) } : base;
  return { level: report.attributionUnavailable ? 'warn' : 'info', fields, msg: rotated.length > 0 ? `reconciled; rotated ${rotated.length} key(s): ${rotated[0]}` : 'reconciled' };
}
