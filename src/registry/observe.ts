/**
 * What a write leaves in the store's history, the one place verbs call for it: its audit event,
 * handed to the store to keep with the write, and no superseded secrets. When a write replaces or
 * removes an object's sealed values, the older revisions lose theirs at once (the store rewrites
 * them) instead of keeping them until compaction; history keeps its events, only the secrets go.
 */
import { isDeepStrictEqual } from 'node:util';
import { leafPathsOf, leavesOf, pathString } from '../api/fields/fieldset.js';
import { sealedField, type StoredApiObject } from '../api/secrets.js';
import type { KubeObject } from '../api/types.js';
import type { PendingWrite, WriteAudit } from '../store/types.js';
import { keyOf, managerOf, present, type RegistryContext, type Writer } from './context.js';
import { storeCall } from './storage-errors.js';
import type { FieldsTouched, ObservedWrite } from './write-observer.js';

/** The field paths between two versions of an object (managedFields aside). */
export function fieldsTouched(ctx: RegistryContext, before: KubeObject | undefined, after: KubeObject): FieldsTouched {
  // Structural markers (`.`) say nothing a reader needs: the items and fields under them do.
  const shown = (p: string) => !p.endsWith('"."]') && p !== '[]';
  const fields: FieldsTouched = { added: [], changed: [], removed: [] };
  // A create's every field is added: its paths are enough, no value is compared.
  if (!before) {
    for (const p of leafPathsOf(ctx.model.schema, after as unknown as Record<string, unknown>)) if (shown(p)) fields.added.push(pathString(p));
    return fields;
  }
  const old = leavesOf(ctx.model.schema, before as unknown as Record<string, unknown>);
  const next = leavesOf(ctx.model.schema, after as unknown as Record<string, unknown>);
  for (const [p, v] of next) {
    if (!shown(p)) continue;
    if (!old.has(p)) fields.added.push(pathString(p));
    else if (old.get(p) !== v) fields.changed.push(pathString(p));
  }
  for (const p of old.keys()) if (shown(p) && !next.has(p)) fields.removed.push(pathString(p));
  return fields;
}

/** What a verb says of its write: verb, subresource, the object and fields (undefined: nothing to record). */
export type DescribeWrite = (write: PendingWrite<StoredApiObject>) => Omit<ObservedWrite, 'fieldManager' | 'requester' | 'resource'> | undefined;

/** The audit the store keeps with a write, unless there is no observer or the write is a dry run. */
export function auditOf(ctx: RegistryContext, opts: Writer & { dryRun?: boolean }, describe: DescribeWrite): WriteAudit<StoredApiObject> | undefined {
  const observer = ctx.observe;
  if (!observer || opts.dryRun) return undefined;
  return {
    eventOf: (pending) => {
      const write = describe(pending);
      if (!write) return undefined;
      return observer.eventOf({ ...write, resource: ctx.model.info.plural, fieldManager: managerOf(opts), ...(opts.requester ? { requester: opts.requester } : {}), ...(opts.auditAnnotations ? { auditAnnotations: opts.auditAnnotations } : {}) });
    },
    committed: (event) => observer.committed(event),
  };
}

/** A delete's record: the object as it goes (or as it now terminates). */
export const describeDelete: DescribeWrite = (w) => ({ verb: 'delete', object: present(w.object) });

/** After a write from `before` to `after` (undefined: removed), scrubs the key's history if its secrets changed. */
export async function scrubReplacedSecrets(ctx: RegistryContext, name: string, before: StoredApiObject | undefined, after: StoredApiObject | undefined): Promise<void> {
  if (!before?.sealed || isDeepStrictEqual(before.sealed, after?.sealed)) return;
  await storeCall(ctx, name, () => ctx.store.scrubHistory(keyOf(ctx, name), sealedField));
}
