/**
 * DELETE: immediate removal, or, while finalizers remain, terminating until the last one goes. As
 * for kube's custom resources, there is no graceful deletion: gracePeriodSeconds (any integer,
 * negative included) is accepted and changes nothing.
 */
import { conflict, invalid } from '../api/errors.js';
import type { FieldError } from '../api/field-errors.js';
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject } from '../api/types.js';
import { servedPlurals } from '../api/resources.js';
import { checkPreconditions } from '../store/preconditions.js';
import type { Preconditions, WriteAudit } from '../store/types.js';
import { keyOf, present, timestamp, type Admit, type RegistryContext, type Writer } from './context.js';
import { auditOf, describeDelete, scrubReplacedSecrets } from './observe.js';
import { storeCall, storeCallUnless, toApiError } from './storage-errors.js';

/** When a terminating object may finally go: deletion requested, no finalizer left, and its grace period over. */
export function isRemovable(obj: KubeObject, now: Date): boolean {
  const meta = obj.metadata;
  if (!meta.deletionTimestamp) return false;
  if ((meta.finalizers ?? []).length > 0) return false;
  return Date.parse(meta.deletionTimestamp) <= now.getTime();
}

export const propagationPolicies = ['Foreground', 'Background', 'Orphan'] as const;
export type PropagationPolicy = (typeof propagationPolicies)[number];

export interface DeleteOptions extends Writer {
  preconditions?: Preconditions;
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
  dryRun?: boolean;
  admit?: Admit;
}

export interface DeleteResult {
  object: KubeObject;
  /** True when the object is gone; false when it is terminating (finalizers pending). */
  removed: boolean;
}

function validateDeleteOptions(opts: DeleteOptions): void {
  const errs: FieldError[] = [];
  const policy = opts.propagationPolicy;
  if (policy !== undefined && !(propagationPolicies as readonly string[]).includes(policy)) {
    errs.push({
      type: 'NotSupported',
      field: 'propagationPolicy',
      value: policy,
      detail: `supported values: ${propagationPolicies.map((p) => `"${p}"`).join(', ')}`,
    });
  }
  if (errs.length > 0) throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', errs);
}

/** Removes the stored version `obj` unless it changed meanwhile; false when it did. */
async function removeExact(ctx: RegistryContext, name: string, obj: KubeObject, audit?: WriteAudit<StoredApiObject>): Promise<StoredApiObject | undefined> {
  const deleted = await storeCallUnless(ctx, name, 'PreconditionFailed', () => ctx.store.delete<StoredApiObject>(keyOf(ctx, name), { resourceVersion: obj.metadata.resourceVersion! }, { audit }));
  if (deleted) await scrubReplacedSecrets(ctx, name, deleted, undefined);
  return deleted;
}

const maxAttempts = 16;

/** The finalizer the garbage collector works through for each propagation policy. */
export const gcFinalizers: Partial<Record<PropagationPolicy, string>> = { Foreground: 'foregroundDeletion', Orphan: 'orphan' };

export async function remove(ctx: RegistryContext, name: string, opts: DeleteOptions = {}): Promise<DeleteResult> {
  validateDeleteOptions(opts);
  // The garbage collector works through the kinds declared in Git (garbage-collector.ts). On another
  // (an AccessRequest) nothing would ever take its finalizer, and nothing it collects depends on such
  // an object: a Foreground or Orphan delete is a Background one there, not terminating for ever
  // (found by a review).
  const collected = (servedPlurals as readonly string[]).includes(ctx.model.info.plural);
  const gcFinalizer = collected ? gcFinalizers[(opts.propagationPolicy ?? 'Background') as PropagationPolicy] : undefined;
  // One event per delete, stored with the write that ends it: the removal, or the start of terminating.
  const removal = auditOf(ctx, opts, describeDelete);
  const terminating = auditOf(ctx, opts, (w) => (isRemovable(w.object, ctx.now()) ? undefined : describeDelete(w)));
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const current = await storeCall(ctx, name, () => ctx.store.get<StoredApiObject>(keyOf(ctx, name)));
    await storeCall(ctx, name, async () => checkPreconditions(keyOf(ctx, name), opts.preconditions, current));
    await opts.admit?.({ verb: 'delete', old: present(current), ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}) });
    const immediate = !current.metadata.deletionTimestamp && (current.metadata.finalizers ?? []).length === 0 && !gcFinalizer;
    if (immediate) {
      if (opts.dryRun) return { object: present(current), removed: true };
      const deleted = await removeExact(ctx, name, current, removal);
      if (deleted) return { object: present(deleted), removed: true };
      continue; // changed between read and delete: decide again on the new version
    }
    const startDeletion = (cur: StoredApiObject): StoredApiObject => {
      const meta = cur.metadata;
      // Foreground and Orphan deletion hand the object to the garbage collector through a finalizer.
      if (gcFinalizer && !(meta.finalizers ?? []).includes(gcFinalizer)) meta.finalizers = [...(meta.finalizers ?? []), gcFinalizer];
      // kube's custom resources have no graceful deletion strategy: the grace period is always 0.
      const now = ctx.now();
      if (!meta.deletionTimestamp) {
        meta.deletionTimestamp = timestamp(now);
        meta.deletionGracePeriodSeconds = 0;
        meta.generation = (meta.generation ?? 0) + 1;
      } else if (now.getTime() < Date.parse(meta.deletionTimestamp)) {
        // A deadline in the future (set by an earlier version, which honoured grace periods) is brought forward.
        meta.deletionTimestamp = timestamp(now);
        meta.deletionGracePeriodSeconds = 0;
      }
      return cur;
    };
    const updated = opts.dryRun
      ? startDeletion(current)
      : await storeCall(ctx, name, () => ctx.store.guaranteedUpdate<StoredApiObject>(keyOf(ctx, name), opts.preconditions, startDeletion, { audit: terminating, mayPassStoredBound: true }));
    if (!isRemovable(updated, ctx.now())) return { object: present(updated), removed: false };
    if (opts.dryRun) return { object: present(updated), removed: true };
    const deleted = await removeExact(ctx, name, updated, removal);
    if (deleted) return { object: present(deleted), removed: true };
  }
  throw conflict(ctx.gr, name);
}

/** Removes terminating objects whose finalizers are gone and whose grace period has run out. */
export async function removeDue(ctx: RegistryContext, objects: KubeObject[]): Promise<string[]> {
  const removed: string[] = [];
  for (const obj of objects) {
    if (!isRemovable(obj, ctx.now())) continue;
    const name = obj.metadata.name!;
    if (await removeExact(ctx, name, obj)) removed.push(name);
  }
  return removed;
}
