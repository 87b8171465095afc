/**
 * Planning: a pure pairing of desired (git) and live objects into an ordered list of actions, as
 * argo's sync planning does: missing live -> create, difference -> update (JSON patch guarded by
 * a resourceVersion test) or replace, missing desired -> prune (if allowed), else unchanged/skip.
 */
import type { AuditEvent } from '../../api/audit-event.js';
import type { DeclaredModel } from '../../api/model.js';
import { servedPlurals } from '../../api/resources.js';
import type { KubeObject, ManagedFieldsEntry } from '../../api/types.js';
import type { Plural } from '../../client/types.js';
import type { Location } from '../source/manifests.js';
import type { DesiredObject } from '../validate.js';
import { annotations, keyDirSink } from './annotations.js';
import { attributeFields, type FieldEvidence } from './attribution.js';
import { diffObject, type Diff, type FieldChange } from './diff.js';
import { heldDisabled, ignoredFields } from './ignore-fields.js';
import { awaitingConfirmation, dueRotation, type PlannedRotation } from './rotation.js';
import { systemClock, type Clock } from '../../clock.js';

export type StepType = 'create' | 'update' | 'replace' | 'delete' | 'unchanged' | 'skip';

export interface PlanStep {
  kind: string;
  plural: Plural;
  name: string;
  type: StepType;
  /** Why a skip is a skip, why an object is pruned, or what of git's an update holds back (a key the server disabled). */
  reason?: string;
  /** The reason as a pull request may read it, when `reason` quotes a live value (another source's id). */
  reasonWithheld?: string;
  location?: Location;
  changes: FieldChange[];
  /** create: the object; replace: the whole object with the live resourceVersion. */
  body?: KubeObject;
  /** update: a JSON patch whose first operation sets the live resourceVersion (a precondition: 409 Conflict if it moved). */
  patch?: unknown[];
  /** delete: the object planned for deletion; the delete fails with 409 Conflict if it changed since. */
  preconditions?: { uid: string; resourceVersion: string };
  /** An OwnedAccessKey whose key goes to a secret (key-secret annotation) and has not reached it yet. */
  keySecret?: string;
  /** update: the key is replaced by a new one (which then goes to keySecret). */
  rotateKey?: boolean;
  /**
   * A scheduled rotation (rotate-every): after the action's write, the key is rotated through the
   * server's rotation subresource, the new value delivered to keySecret, and only then confirmed.
   */
  rotation?: PlannedRotation;
  drift: boolean;
}

export interface Plan {
  sourceId: string;
  actions: PlanStep[];
  /** Set when a guard refused the plan: nothing may be written. */
  refused?: string;
  /** Why the audit trail could not name who made drift (then managedFields name the manager only). */
  attributionUnavailable?: string;
}

export interface PlanOptions {
  sourceId: string;
  /** Ids this source had by default in earlier versions: objects carrying one are adopted when git describes them, never pruned. */
  formerSourceIds?: string[];
  prune: boolean;
  allowEmpty: boolean;
  maxPrune: number;
  /** The time scheduled rotations are judged by (default: the system's). */
  now?: Clock;
}

const kindOrder: Record<Plural, number> = { teams: 0, ownedaccesskeys: 1, federatedcredentials: 2 };

/** Why an object carrying one of this source's former ids is not pruned, and what to do. */
function formerIdReason(former: string, current: string): string {
  return `not in the source, and annotated with "${former}", a former default id of this source (now "${current}"): not pruned, as another source may share that old id; delete it by hand, or prune once with --source-id "${former}"`;
}

/** The object as the reconciler writes it: marked with the source that manages it. */
export function withSource(obj: KubeObject, sourceId: string): KubeObject {
  const copy = structuredClone(obj);
  copy.metadata.annotations = { ...(copy.metadata.annotations ?? {}), [annotations.source]: sourceId };
  return copy;
}

/** The `file:` sink of a key whose --key-dir file is still pending delivery (see keyDirSink), else undefined. */
function strandedKeyFile(live: KubeObject): string | undefined {
  const sink = keyDirSink(live.metadata.name!);
  return live.metadata.annotations?.[annotations.keyDelivered] === `pending:${sink}` ? sink : undefined;
}

/**
 * An action and what its changes were attributed from: the diff is made once, and the changes are
 * named again from the audit trail once it is read (withTrail), without planning the object again.
 */
export interface Drafted {
  step: PlanStep;
  /** update and replace: the changed fields, and the live managedFields they were attributed from. */
  evidence?: { fields: FieldEvidence[]; managedFields: ManagedFieldsEntry[] };
}

/** The action for one object: used for the whole plan and to re-plan after a conflict. */
export function planObject(model: DeclaredModel, desired: DesiredObject | undefined, live: KubeObject | undefined, opts: PlanOptions, history?: AuditEvent[]): PlanStep {
  return draftObject(model, desired, live, opts, history).step;
}

/** The step with its changes named from the object's audit trail (pure: no second diff). */
export function withTrail(drafted: Drafted, history: AuditEvent[]): PlanStep {
  if (!drafted.evidence) return drafted.step;
  const changes = attributeFields(drafted.evidence.fields, drafted.evidence.managedFields, history);
  return { ...drafted.step, changes, drift: changes.some((c) => c.drift) };
}

function draftObject(model: DeclaredModel, desired: DesiredObject | undefined, live: KubeObject | undefined, opts: PlanOptions, history?: AuditEvent[]): Drafted {
  const step = stepOf(model, desired, live, opts, history);
  return 'diff' in step ? { step: step.step, evidence: { fields: step.diff.fields, managedFields: live!.metadata.managedFields ?? [] } } : { step };
}

/** The step, with its diff when it changes fields (update, replace): the only place an object is diffed. */
function stepOf(model: DeclaredModel, desired: DesiredObject | undefined, live: KubeObject | undefined, opts: PlanOptions, history?: AuditEvent[]): PlanStep | { step: PlanStep; diff: Diff } {
  const { kind, plural } = model.info;
  const name = (desired?.obj ?? live)!.metadata.name!;
  const base = { kind, plural, name, changes: [], drift: false, ...(desired ? { location: { file: desired.manifest.file, line: desired.manifest.line, column: desired.manifest.column } } : {}) };
  const managedBy = live?.metadata.annotations?.[annotations.source];
  const formerly = managedBy !== undefined && (opts.formerSourceIds ?? []).includes(managedBy);
  if (!desired) {
    if (formerly) return { ...base, type: 'skip', reason: formerIdReason(managedBy, opts.sourceId) };
    if (managedBy !== opts.sourceId) return { ...base, type: 'skip', reason: 'not managed by this source' };
    if (live!.metadata.deletionTimestamp) return { ...base, type: 'skip', reason: 'already being deleted' };
    if (live!.metadata.annotations?.[annotations.prune] === 'disabled') return { ...base, type: 'skip', reason: `not in the source; pruning disabled by ${annotations.prune}` };
    if (!opts.prune) return { ...base, type: 'skip', reason: 'not in the source; pruned only with --prune' };
    return { ...base, type: 'delete', preconditions: { uid: live!.metadata.uid!, resourceVersion: live!.metadata.resourceVersion! }, reason: 'not in the source' };
  }
  const wanted = withSource(desired.obj, opts.sourceId);
  const declared = plural === 'ownedaccesskeys' ? wanted.metadata.annotations?.[annotations.keySecret] : undefined;
  // A key with no key-secret whose --key-dir file apply never confirmed written (the run died, or
  // the write failed): that file is its sink until a value reaches it, so it is planned like a
  // first delivery that was never recorded (rotated with the overlap, written again, recorded).
  const keySecret = declared ?? (live && plural === 'ownedaccesskeys' ? strandedKeyFile(live) : undefined);
  if (!live) return { ...base, type: 'create', body: wanted, changes: [{ path: '', after: wanted.spec, drift: false }], ...(keySecret ? { keySecret } : {}) };
  if (managedBy && managedBy !== opts.sourceId && !formerly) return { ...base, type: 'skip', reason: `managed by another source (${managedBy})`, reasonWithheld: 'managed by another source (which one is not shown in a pull request)' };
  if (live.metadata.deletionTimestamp) return { ...base, type: 'skip', reason: 'being deleted on the server' };
  const replace = wanted.metadata.annotations?.[annotations.syncStrategy] === 'replace';
  // A key the server disabled for a reason (a leak report, the unused-key rule) stays disabled
  // whatever git says, until someone removes the reason: git's `enabled` would undo a revocation.
  const held = plural === 'ownedaccesskeys' ? heldDisabled(wanted, live) : undefined;
  const ignored = ignoredFields(wanted);
  const diff = diffObject(model, wanted, live, { ignore: held ? (d) => d === 'spec.disabled' || ignored(d) : ignored, replace, ...(history ? { history } : {}) });
  const { target, patch, changes } = diff;
  // A resourceVersion in a patch is a precondition: a write racing another one loses with 409 Conflict.
  const guard = { op: 'replace', path: '/metadata/resourceVersion', value: live.metadata.resourceVersion };
  // A key never delivered anywhere (no key-delivered, no rotation in flight): nobody holds its value,
  // so a new one at once. A key delivered elsewhere (key-secret changed; or `pending:` its first
  // delivery may have happened unrecorded) goes through the scheduled path: its holders keep the
  // old value for the overlap, and a failed delivery leaves it working.
  const delivered = keySecret ? live.metadata.annotations?.[annotations.keyDelivered] : undefined;
  const rotate = keySecret && delivered === undefined && !awaitingConfirmation(live) ? { keySecret, rotateKey: true } : {};
  const moved = keySecret === undefined || delivered === keySecret ? undefined : delivered?.startsWith('pending:') ? ('unrecorded' as const) : ('moved' as const);
  // A key whose value is older than its schedule (or whose last rotation was never confirmed) is
  // rotated with an overlap; a key rotated for a missing delivery just now needs no second one.
  const due = keySecret && !rotate.rotateKey ? dueRotation(wanted, live, (opts.now ?? systemClock)(), moved, keySecret) : undefined;
  const scheduled = due ? { keySecret, rotation: due } : {};
  const drift = changes.some((c) => c.drift);
  // The reason is a live annotation's text: a pull request reads only that something holds the key.
  const heldReason = held ? { reason: held, reasonWithheld: 'held disabled by the server (why is not shown in a pull request); git\'s spec.disabled applies once a person enables the key (spec.disabled: false)' } : {};
  if (patch.length === 0) {
    if (rotate.rotateKey) return { ...base, type: 'update', patch: [guard], ...rotate, ...heldReason };
    if (due) return { ...base, type: 'update', patch: [guard], ...scheduled, ...heldReason };
    return held ? { ...base, type: 'skip', ...heldReason } : { ...base, type: 'unchanged' };
  }
  if (replace && !rotate.rotateKey) return { step: { ...base, type: 'replace', body: target, changes, drift, ...scheduled, ...heldReason }, diff };
  return { step: { ...base, type: 'update', patch: [guard, ...patch], changes, drift, ...rotate, ...scheduled, ...heldReason }, diff };
}

/** The plan, its changes named from managedFields alone (see draftReconcile for the audit trail's). */
export function planReconcile(desired: DesiredObject[], live: Partial<Record<Plural, KubeObject[]>>, models: Record<Plural, DeclaredModel>, opts: PlanOptions): Plan {
  return draftReconcile(desired, live, models, opts).plan;
}

/** The plan, and beside each action (same order) what its changes were attributed from. */
export function draftReconcile(
  desired: DesiredObject[],
  /** Live objects by kind; a kind left out has none. */
  live: Partial<Record<Plural, KubeObject[]>>,
  models: Record<Plural, DeclaredModel>,
  opts: PlanOptions,
): { plan: Plan; drafted: Drafted[] } {
  const drafted: Drafted[] = [];
  for (const plural of servedPlurals) {
    const want = new Map(desired.filter((d) => d.plural === plural).map((d) => [d.obj.metadata.name!, d]));
    const have = new Map((live[plural] ?? []).map((o) => [o.metadata.name!, o]));
    for (const name of new Set([...want.keys(), ...have.keys()])) {
      const live = have.get(name);
      // Live objects this source neither describes nor manages are none of its business.
      const managedBy = live?.metadata.annotations?.[annotations.source];
      if (!want.has(name) && managedBy !== opts.sourceId && !(managedBy && opts.formerSourceIds?.includes(managedBy))) continue;
      drafted.push(draftObject(models[plural], want.get(name), live, opts));
    }
  }
  // Creates and updates: owners before what refers to them (kindOrder). Deletes: the reverse.
  const rank = (a: PlanStep) => (a.type === 'delete' ? 10 + (servedPlurals.length - kindOrder[a.plural]) : kindOrder[a.plural]);
  drafted.sort(({ step: a }, { step: b }) => rank(a) - rank(b) || a.name.localeCompare(b.name));
  const actions = drafted.map((d) => d.step);
  const plan: Plan = { sourceId: opts.sourceId, actions };
  const deletes = actions.filter((a) => a.type === 'delete').length;
  const managed = servedPlurals.flatMap((p) => live[p] ?? []).filter((o) => o.metadata.annotations?.[annotations.source] === opts.sourceId).length;
  if (opts.prune && desired.length === 0 && managed > 0 && !opts.allowEmpty) {
    plan.refused = `the source holds no objects but ${managed} live object(s) are managed by it: refusing to prune them all (use --allow-empty if that is intended)`;
  } else if (deletes > opts.maxPrune) {
    plan.refused = `the plan would delete ${deletes} object(s), more than --max-prune ${opts.maxPrune}: refusing (raise --max-prune if that is intended)`;
  }
  return { plan, drafted };
}
