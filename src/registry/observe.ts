/** Tells the context's write observer about a write that succeeded: the one place verbs call. */
import { leavesOf, pathString } from '../api/fields/fieldset.js';
import type { KubeObject } from '../api/types.js';
import { managerOf, type RegistryContext, type Writer } from './context.js';
import type { FieldsTouched, ObservedWrite } from './write-observer.js';

/** The field paths between two versions of an object (managedFields aside). */
export function fieldsTouched(ctx: RegistryContext, before: KubeObject | undefined, after: KubeObject): FieldsTouched {
  const old = before ? leavesOf(ctx.model.schema, before as unknown as Record<string, unknown>) : new Map<string, string>();
  const next = leavesOf(ctx.model.schema, after as unknown as Record<string, unknown>);
  // Structural markers (`.`) say nothing a reader needs: the items and fields under them do.
  const shown = (p: string) => !p.endsWith('"."]') && p !== '[]';
  const fields: FieldsTouched = { added: [], changed: [], removed: [] };
  for (const [p, v] of next) {
    if (!shown(p)) continue;
    if (!old.has(p)) fields.added.push(pathString(p));
    else if (old.get(p) !== v) fields.changed.push(pathString(p));
  }
  for (const p of old.keys()) if (shown(p) && !next.has(p)) fields.removed.push(pathString(p));
  return fields;
}

/** Tells the observer, unless there is none or the write was a dry run. */
export function observeWrite(ctx: RegistryContext, opts: Writer & { dryRun?: boolean }, write: Omit<ObservedWrite, 'fieldManager' | 'requester' | 'resource'>): void {
  if (!ctx.observe || opts.dryRun) return;
  ctx.observe({ ...write, resource: ctx.model.info.plural, fieldManager: managerOf(opts), ...(opts.requester ? { requester: opts.requester } : {}), ...(opts.auditAnnotations ? { auditAnnotations: opts.auditAnnotations } : {}) });
}
