/**
 * Saved plans (`plan --out`, `apply --plan`): the reviewed plan, written as JSON with what it was
 * made from, so that applying it later applies exactly it or nothing. The file holds the desired
 * objects, the actions, the source revision, and for every object the plan read its
 * resourceVersion and a digest of its content (or the fact it was absent); never a key value.
 * A SHA-256 checksum over the rest detects a file edited or damaged after plan wrote it (it is
 * not a signature: whoever can write the file can recompute it).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../api/canonical-json.js';
import type { KubeObject } from '../../api/types.js';
import type { Plural } from '../../client/types.js';
import { redact, type Report } from '../report/report.js';
import type { DesiredObject } from '../validate.js';
import { coreOf } from '../plan/diff.js';
import type { PlanStep, Plan } from '../plan/plan.js';
import { savedPlanNameErrors } from './saved-names.js';
import type { SavedApprovals } from '../approvals/plan-approvals.js';
import { withheldAction, withheldPlanRefusal, withheldRead } from './saved-withheld.js';
import { plannedRotationStatus } from '../plan/rotation.js';

/**
 * 2 (stop 63): a key's digest holds the rotation status planning reads. A plan of format 1 is
 * refused with "plan again" rather than found stale by a digest it never held.
 */
export const savedPlanFormat = 2;

/** What the plan knew about one object: absent, or present at a resourceVersion with this content. */
export interface ObjectRead {
  kind: string;
  plural: Plural;
  name: string;
  absent?: true;
  uid?: string;
  resourceVersion?: string;
  /** SHA-256 of labels, annotations, finalizers, owners, spec and deletion: what planning compares. */
  digest?: string;
}

export interface SavedPlan {
  apiVersion: 'teamkeys/v1';
  kind: 'SavedPlan';
  formatVersion: number;
  createdAt: string;
  source: Report['source'];
  /** Where the plan was made against, and the group/version its kinds are served under. */
  target: string;
  targetApiVersion: string;
  objects: KubeObject[];
  reads: ObjectRead[];
  actions: PlanStep[];
  /** Saved in pull-request mode: live values withheld (saved-withheld.ts), never applied. */
  withheld?: true;
  /** Made for a pull request: the approvals its apply checks again (gitops/approvals/). */
  approvals?: SavedApprovals;
  checksum: string;
}

const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/**
 * The part of a live object a plan depends on: a status write (key activity) leaves it unchanged,
 * but the rotation status a plan's scheduled rotation is judged from does not (a saved plan rotated
 * again a key an operator had just rotated by hand, and the value they handed out stopped working:
 * found by a review). Only that part: key use rewrites the rest of status.rotation, and a plan
 * refused for every use of a recently rotated key could not be applied (the review's second pass).
 */
export function contentDigest(obj: KubeObject): string {
  const rotation = plannedRotationStatus(obj);
  return sha256(canonicalJson({ ...coreOf(obj), deletionTimestamp: obj.metadata.deletionTimestamp ?? null, ...(Object.keys(rotation).length > 0 ? { rotation } : {}) }));
}

export function readOf(kind: string, plural: Plural, name: string, live: KubeObject | undefined): ObjectRead {
  if (!live) return { kind, plural, name, absent: true };
  return { kind, plural, name, uid: live.metadata.uid!, resourceVersion: live.metadata.resourceVersion!, digest: contentDigest(live) };
}

function checksumOf(plan: Omit<SavedPlan, 'checksum'>): string {
  return sha256(canonicalJson(plan));
}

/** Builds the file's content from a plan and what it was made from. */
export function savePlan(input: { plan: Plan; desired: DesiredObject[]; live: Record<Plural, KubeObject[]>; source: Report['source']; target: string; targetApiVersion: string; now?: Date; withheld?: boolean; approvals?: SavedApprovals }): SavedPlan {
  const find = (plural: Plural, name: string) => input.live[plural].find((o) => o.metadata.name === name);
  const reads = new Map<string, ObjectRead>();
  for (const a of input.plan.actions) reads.set(`${a.plural}/${a.name}`, readOf(a.kind, a.plural, a.name, find(a.plural, a.name)));
  // A key or a FederatedCredential may name a team that only exists live: that team must still be
  // there, the same one, when applying (the credential's team was not read: a team re-created as an
  // admin team since was bound to it, found by a review).
  for (const d of input.desired) {
    const team = (d.obj.spec as { team?: string } | undefined)?.team;
    if ((d.plural === 'ownedaccesskeys' || d.plural === 'federatedcredentials') && team && !reads.has(`teams/${team}`)) reads.set(`teams/${team}`, readOf('Team', 'teams', team, find('teams', team)));
  }
  // Change values are for reading; they never carry a secret (the server returns none, and redact makes sure).
  const redacted = input.plan.actions.map((a) => ({ ...a, changes: a.changes.map((c) => redact(c) as typeof c) }));
  const actions = input.withheld ? redacted.map(withheldAction) : redacted;
  const body: Omit<SavedPlan, 'checksum'> = {
    apiVersion: 'teamkeys/v1',
    kind: 'SavedPlan',
    formatVersion: savedPlanFormat,
    createdAt: (input.now ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    source: input.source,
    target: input.target,
    targetApiVersion: input.targetApiVersion,
    objects: input.desired.map((d) => d.obj),
    reads: input.withheld ? [...reads.values()].map(withheldRead) : [...reads.values()],
    actions,
    ...(input.withheld ? { withheld: true as const } : {}),
    ...(input.approvals ? { approvals: input.approvals } : {}),
  };
  return { ...body, checksum: checksumOf(body) };
}

/** Parses and checks a saved plan's text: a message for the user on anything wrong, else the plan. */
export function parseSavedPlan(text: string): SavedPlan | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse quotes the text it choked on: a plan path that names another file must not show it.
    return 'not a saved plan: the file is not JSON';
  }
  const plan = value as Partial<SavedPlan> | null;
  if (plan?.kind !== 'SavedPlan' || plan.apiVersion !== 'teamkeys/v1') return 'not a saved plan (expected kind SavedPlan in teamkeys/v1, as teamkeys plan --out writes)';
  if (plan.formatVersion !== savedPlanFormat) return `saved plan format ${String(plan.formatVersion)} is not the format ${savedPlanFormat} this teamkeys reads: plan again with this version`;
  if (!Array.isArray(plan.actions) || !Array.isArray(plan.reads) || typeof plan.checksum !== 'string') return 'the saved plan is incomplete (actions, reads or checksum missing)';
  const { checksum, ...rest } = plan as SavedPlan;
  if (checksumOf(rest) !== checksum) return 'the plan file was changed after teamkeys plan wrote it (its checksum does not match): plan again instead of editing it';
  // The checksum is no signature: whoever wrote the file could have recomputed it over any name.
  if (plan.withheld) return withheldPlanRefusal;
  const bad = savedPlanNameErrors(plan as SavedPlan);
  if (bad.length > 0) return `the saved plan names what no plan names, so nothing of it is used: ${bad.slice(0, 5).join('; ')}${bad.length > 5 ? `; and ${bad.length - 5} more` : ''}`;
  return plan as SavedPlan;
}
