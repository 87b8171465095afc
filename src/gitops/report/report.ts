/** The report of a run, as data: built from the plan and what applying it did. */
import { secretFieldNames } from '../../api/secret-fields.js';
import type { ChangeSetEntry } from '../apply/apply.js';
import { notStartedNote } from '../apply/not-started.js';
import type { AccessChange } from '../plan/access-change.js';
import type { Attribution } from '../plan/attribution.js';
import type { PlanStep, Plan } from '../plan/plan.js';
import { formatAge } from '../../duration.js';
import type { ManifestError } from '../source/manifests.js';
import type { KeyHealthReport } from './key-health.js';
import type { ApprovalReport } from '../approvals/check.js';

/**
 * clean: live equals git; changes: a plan with work to do; drifted: someone else's change is
 * live (planned to be reverted, or reported and left in place); applied: every write succeeded.
 */
export type Outcome = 'clean' | 'changes' | 'drifted' | 'applied' | 'failed' | 'refused' | 'invalid';

const failedOutcomes: ReadonlySet<Outcome> = new Set(['invalid', 'refused', 'failed']);

/** A run that did not do what it was asked (a source with errors, a refused plan, a failed write): exit 1, a failed step, no saved plan, backoff. */
export function isFailedOutcome(outcome: Outcome): boolean {
  return failedOutcomes.has(outcome);
}

export interface ReportObject {
  kind: string;
  name: string;
  /** rotate: a scheduled rotation of the key's value and nothing else. */
  action: 'create' | 'update' | 'replace' | 'delete' | 'rotate' | 'skip';
  result?: 'Created' | 'Updated' | 'Replaced' | 'Deleted' | 'Rotated' | 'Skipped' | 'Failed';
  reason?: string;
  file?: string;
  line?: number;
  column?: number;
  drift: boolean;
  error?: string;
  keyFile?: string;
  /** The key-secret target the new key reached (never the key). */
  keySecret?: string;
  note?: string;
  /** A scheduled rotation planned (and, after apply, made): never the value. */
  rotation?: ReportRotation;
  changes: { path: string; before?: unknown; after?: unknown; drift: boolean; description?: string; lastChangedBy?: Attribution; withheld?: true }[];
}

export interface ReportRotation {
  /** due: the value is older than rotate-every; unconfirmed: an earlier rotation's delivery is retried; moved: key-secret changed for a key delivered before. */
  reason: 'due' | 'unconfirmed' | 'moved' | 'unrecorded';
  /** The value's age when planned: `31d`. Absent in a pull request's plan (a live fact it may not see). */
  age?: string;
  ageSeconds?: number;
  /** A pull request's plan: the key would be rotated if due; its age and any unconfirmed rotation are not shown. */
  withheld?: true;
  /** Absent for a retry of a key with no schedule (left unconfirmed before its rotate-every was removed). */
  rotateEvery?: string;
  overlap: string;
  sink: string;
  /** After apply: when the previous value stops working (the overlap started once the new value was delivered). */
  previousValidUntil?: string;
}

export interface Report {
  apiVersion: 'teamkeys/v1';
  kind: 'Report';
  mode: 'validate' | 'plan' | 'apply';
  generatedAt: string;
  source: { id: string; description: string; revision?: string };
  target: string;
  outcome: Outcome;
  refused?: string;
  /** Why the server's audit trail could not be read to name who made drift: drift is then named by field manager only. */
  attributionUnavailable?: string;
  /** rotate: keys whose value is rotated (alone, or beside an update of the key). */
  summary: Record<'create' | 'update' | 'replace' | 'delete' | 'unchanged' | 'skip' | 'drifted' | 'failed', number> & { rotate?: number };
  errors: ManifestError[];
  /** Findings that do not stop a run (a grant naming a team that exists nowhere yet); absent when none. */
  warnings?: ManifestError[];
  objects: ReportObject[];
  /** Live keys expiring within --warn-expiry or unused for --warn-unused (Login keys too); absent when none. */
  keyHealth?: KeyHealthReport;
  /** The GitHub owners key-secret may deliver keys to; absent when any may be named. */
  keySecretOwners?: string[];
  /** Who gains and loses which rights once the plan is applied (plan/access-change.ts); every entry, however many. */
  accessChange?: AccessChange;
  /** A pull request's plan (or a saved plan's apply): the approvals the Teams ask for, given and missing. */
  approvals?: ApprovalReport;
}

const secretNames = new Set(secretFieldNames());

/** Values in a report never carry a secret, whatever path they come from. */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, secretNames.has(k) ? '[redacted]' : redact(v)]));
}

export interface ReportInput {
  mode: Report['mode'];
  source: Report['source'];
  target: string;
  errors: ManifestError[];
  warnings?: ManifestError[];
  plan?: Plan;
  changeSet?: ChangeSetEntry[];
  keyHealth?: KeyHealthReport;
  keySecretOwners?: string[];
  accessChange?: AccessChange;
  now?: Date;
}

export function buildReport(input: ReportInput): Report {
  const summary: Report['summary'] = { create: 0, update: 0, replace: 0, delete: 0, unchanged: 0, skip: 0, drifted: 0, failed: 0 };
  let rotations = 0;
  const entries = new Map(input.changeSet?.map((e) => [`${e.action.plural}/${e.action.name}`, e]));
  const objects: ReportObject[] = [];
  for (const a of input.plan?.actions ?? []) {
    const rotateOnly = isRotationOnly(a);
    if (a.rotation) rotations++;
    if (!rotateOnly) summary[a.type === 'unchanged' ? 'unchanged' : a.type]++;
    if (a.drift) summary.drifted++;
    const entry = entries.get(`${a.plural}/${a.name}`);
    // A step the run was stopped before is not done: the run failed, whatever else it wrote (a
    // review found a stopped run reported as applied, `create: 5`, with nothing written).
    if (entry?.result === 'Failed' || entry?.note === notStartedNote) summary.failed++;
    if (a.type === 'unchanged') continue;
    const o: ReportObject = {
      kind: a.kind,
      name: a.name,
      action: rotateOnly ? 'rotate' : a.type,
      drift: a.drift,
      changes: a.changes.map((c) => ({
        path: c.path,
        drift: c.drift,
        ...(c.before !== undefined ? { before: redact(c.before) } : {}),
        ...(c.after !== undefined ? { after: redact(c.after) } : {}),
        ...(c.description ? { description: c.description } : {}),
        ...(c.lastChangedBy ? { lastChangedBy: c.lastChangedBy } : {}),
        ...(c.withheld ? { withheld: true as const } : {}),
      })),
    };
    if (a.reason) o.reason = a.reason;
    if (a.location) Object.assign(o, { file: a.location.file, line: a.location.line, column: a.location.column });
    if (entry && entry.result !== 'Unchanged') o.result = rotateOnly && entry.result === 'Updated' ? 'Rotated' : entry.result;
    if (a.rotation) {
      const r = a.rotation;
      const rotation: ReportRotation = { reason: r.reason, ...(r.ageSeconds !== undefined ? { age: formatAge(r.ageSeconds * 1000), ageSeconds: r.ageSeconds } : {}), ...(r.withheld ? { withheld: true as const } : {}), ...(r.rotateEvery ? { rotateEvery: r.rotateEvery } : {}), overlap: r.overlap, sink: r.sink };
      if (entry?.previousValidUntil) rotation.previousValidUntil = entry.previousValidUntil;
      o.rotation = rotation;
    }
    if (entry?.error) o.error = entry.error;
    if (entry?.keyFile) o.keyFile = entry.keyFile;
    if (entry?.keySecret) o.keySecret = entry.keySecret;
    if (entry?.note) o.note = entry.note;
    else if (a.keySecret && !entry && !a.rotation) {
      o.note = a.rotateKey ? `its key never reached ${a.keySecret}: apply rotates it and delivers the new key` : `apply delivers the key the server generates to ${a.keySecret}`;
    }
    objects.push(o);
  }
  if (rotations > 0) summary.rotate = rotations;
  const work = workCount(summary);
  // Drift an apply reverted is applied; drift planned, or reported and left in place, is drifted.
  const driftLeft = input.mode === 'apply' ? objects.some((o) => o.drift && o.action === 'skip') : summary.drifted > 0;
  const outcome: Outcome =
    input.errors.length > 0
      ? 'invalid'
      : input.plan?.refused
        ? 'refused'
        : summary.failed > 0
          ? 'failed'
          : driftLeft
            ? 'drifted'
            : work > 0
              ? input.mode === 'apply'
                ? 'applied'
                : 'changes'
              : 'clean';
  const report: Report = {
    apiVersion: 'teamkeys/v1',
    kind: 'Report',
    mode: input.mode,
    generatedAt: (input.now ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    source: input.source,
    target: input.target,
    outcome,
    summary,
    errors: input.errors,
    ...(input.warnings?.length ? { warnings: input.warnings } : {}),
    objects,
    ...(input.keyHealth ? { keyHealth: input.keyHealth } : {}),
    ...(input.keySecretOwners ? { keySecretOwners: input.keySecretOwners } : {}),
    ...(input.accessChange ? { accessChange: input.accessChange } : {}),
  };
  if (input.plan?.refused) report.refused = input.plan.refused;
  if (input.plan?.attributionUnavailable) report.attributionUnavailable = input.plan.attributionUnavailable;
  return report;
}

/** The writes a plan has to make (or an apply made or tried): creates, updates, replacements, deletions and rotations. */
export function workCount(summary: Report['summary']): number {
  return summary.create + summary.update + summary.replace + summary.delete + (summary.rotate ?? 0);
}

/** An action whose only write is a scheduled rotation: reported as `rotate`, not as an update. */
function isRotationOnly(a: PlanStep): boolean {
  return a.type === 'update' && a.rotation !== undefined && (a.patch?.length ?? 0) <= 1 && a.changes.length === 0;
}
