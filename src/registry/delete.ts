/** DELETE: immediate removal, or graceful deletion while finalizers or a grace period remain. */
import { conflict, invalid } from '../api/errors.js';
import type { FieldError } from '../api/field-errors.js';
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject } from '../api/types.js';
import { checkPreconditions } from '../store/preconditions.js';
import type { Preconditions } from '../store/types.js';
import { keyOf, present, timestamp, type RegistryContext, type Writer } from './context.js';
import type { Admit } from './admission.js';
import { isRemovable } from './lifecycle.js';
import { scrubReplacedSecrets } from './scrub.js';
import { storeCall, storeCallUnless, toApiError } from './storage-errors.js';

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
  /** True when the object is gone; false when it is terminating (finalizers or grace pending). */
  removed: boolean;
}

/**
 * The longest grace period, about 100 years. kube takes any int64 and lets the deadline overflow;
 * here a deletionTimestamp must stay a real RFC 3339 time, so a longer period is refused.
 */
export const maxGracePeriodSeconds = 100 * 365 * 24 * 3600;

function validateDeleteOptions(opts: DeleteOptions): void {
  const errs: FieldError[] = [];
  const grace = opts.gracePeriodSeconds;
  if (grace !== undefined && (!Number.isInteger(grace) || grace < 0)) {
    errs.push({ type: 'Invalid', field: 'gracePeriodSeconds', value: grace, detail: 'must be a whole number >= 0' });
  } else if (grace !== undefined && grace > maxGracePeriodSeconds) {
    errs.push({ type: 'Invalid', field: 'gracePeriodSeconds', value: grace, detail: `must be no more than ${maxGracePeriodSeconds}` });
  }
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
async function removeExact(ctx: RegistryContext, name: string, obj: KubeObject): Promise<StoredApiObject | undefined> {
  const deleted = await storeCallUnless(ctx, name, 'PreconditionFailed', () => ctx.store.delete<StoredApiObject>(keyOf(ctx, name), { resourceVersion: obj.metadata.resourceVersion! }));
  if (deleted) await scrubReplacedSecrets(ctx, name, deleted, undefined);
  return deleted;
}

const maxAttempts = 16;

/** The finalizer the garbage collector works through for each propagation policy. */
export const gcFinalizers: Partial<Record<PropagationPolicy, string>> = { Foreground: 'foregroundDeletion', Orphan: 'orphan' };

export async function remove(ctx: RegistryContext, name: string, opts: DeleteOptions = {}): Promise<DeleteResult> {
  validateDeleteOptions(opts);
  const grace = opts.gracePeriodSeconds ?? 0;
  const gcFinalizer = gcFinalizers[(opts.propagationPolicy ?? 'Background') as PropagationPolicy];
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const current = await storeCall(ctx, name, () => ctx.store.get<StoredApiObject>(keyOf(ctx, name)));
    await storeCall(ctx, name, async () => checkPreconditions(keyOf(ctx, name), opts.preconditions, current));
    await opts.admit?.({ verb: 'delete', old: present(current) });
    const immediate = !current.metadata.deletionTimestamp && (current.metadata.finalizers ?? []).length === 0 && grace === 0 && !gcFinalizer;
    if (immediate) {
      if (opts.dryRun) return { object: present(current), removed: true };
      const deleted = await removeExact(ctx, name, current);
      if (deleted) return { object: present(deleted), removed: true };
      continue; // changed between read and delete: decide again on the new version
    }
    const startDeletion = (cur: StoredApiObject): StoredApiObject => {
      const meta = cur.metadata;
      // Foreground and Orphan deletion hand the object to the garbage collector through a finalizer.
      if (gcFinalizer && !(meta.finalizers ?? []).includes(gcFinalizer)) meta.finalizers = [...(meta.finalizers ?? []), gcFinalizer];
      const deadline = new Date(ctx.now().getTime() + grace * 1000);
      if (!meta.deletionTimestamp) {
        meta.deletionTimestamp = timestamp(deadline);
        meta.deletionGracePeriodSeconds = grace;
        meta.generation = (meta.generation ?? 0) + 1;
      } else if (deadline.getTime() < Date.parse(meta.deletionTimestamp)) {
        // A deletion may be brought forward, never pushed back.
        meta.deletionTimestamp = timestamp(deadline);
        meta.deletionGracePeriodSeconds = grace;
      }
      return cur;
    };
    const updated = opts.dryRun
      ? startDeletion(current)
      : await storeCall(ctx, name, () => ctx.store.guaranteedUpdate<StoredApiObject>(keyOf(ctx, name), opts.preconditions, startDeletion));
    if (!isRemovable(updated, ctx.now())) return { object: present(updated), removed: false };
    if (opts.dryRun) return { object: present(updated), removed: true };
    const deleted = await removeExact(ctx, name, updated);
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
