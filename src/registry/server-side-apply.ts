/**
 * Server-side apply (PATCH application/apply-patch+yaml): the manager's configuration is merged
 * into the live object by the schema; it owns exactly the fields it applies; conflicts with other
 * managers are a 409 unless forced. Applying to a missing object creates it.
 */
import { lastAppliedAnnotation } from '../api/last-applied.js';
import { decodeObject, type Decoding } from '../api/decode.js';
import { ApiError, badRequest, conflict } from '../api/errors.js';
import { leafPathsOf, pathString } from '../api/fields/fieldset.js';
import { recordApply, type Conflict } from '../api/fields/managed.js';
import { mergeApplied } from '../api/fields/merge.js';
import { invalidPatchOptions, patchOptionsErrors } from '../api/patch-options.js';
import { withoutSecrets } from '../api/secrets.js';
import { isJsonMap, type ManagedFieldsEntry } from '../api/types.js';
import type { Requester } from './write-observer.js';
import { timestamp, type Admit, type RegistryContext, type SignInTie, type WriteResult } from './context.js';
import { create } from './create.js';
import { runUpdate } from './update.js';

export interface ApplyOptions extends Decoding {
  fieldManager?: string;
  requester?: Requester;
  /** A key that server-side apply creates is tied to this Login key (keys.ts). */
  signIn?: SignInTie;
  /** Who sets a key's value with this apply (keys.ts markValueSetter). */
  valueSetBy?: string;
  force?: boolean;
  dryRun?: boolean;
  admit?: Admit;
}

/** kube's printManager: `"kubectl-edit" using management.service/v1 at <time>` for Update entries. */
function printManager(m: ManagedFieldsEntry): string {
  let s = JSON.stringify(m.manager ?? '');
  if (m.subresource) s += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') s += m.time ? ` using ${m.apiVersion} at ${m.time}` : ` using ${m.apiVersion}`;
  return s;
}

/** The 409 kube-apiserver answers, one FieldManagerConflict cause per field. */
export function applyConflict(conflicts: Conflict[]): ApiError {
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.manager)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const who = printManager(c.manager);
      byManager.set(who, [...(byManager.get(who) ?? []), pathString(c.path)]);
    }
    const lines = [...byManager.keys()].sort().flatMap((who) => [`conflicts with ${who}:`, ...byManager.get(who)!.map((p) => `- ${p}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, {
    causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) })),
  });
}

/** The manager of `kubectl apply --server-side`: the only one the upgrade path serves (others opt out by their name). */
const kubectlManager = 'kubectl';

function lastApplied(obj: Record<string, unknown>): Record<string, unknown> | undefined {
  const text = ((obj.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations ?? {})[lastAppliedAnnotation];
  if (typeof text !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isJsonMap(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * kube's client-side to server-side apply upgrade (its lastAppliedManager): `kubectl apply
 * --server-side` may take over, without --force-conflicts, the fields recorded in the
 * last-applied annotation that `kubectl apply` (manager kubectl-client-side-apply) left, so a
 * file moves from one to the other without a conflict. Returns the conflicts that still stand
 * (only those are reported, as kube reports them); none means the apply goes ahead, forced.
 */
function conflictsAfterUpgrade(ctx: RegistryContext, manager: string, live: Record<string, unknown>, conflicts: Conflict[]): Conflict[] {
  if (manager !== kubectlManager) return conflicts;
  const applied = lastApplied(live);
  if (!applied) return conflicts;
  const allowed = leafPathsOf(ctx.model.schema, applied);
  return conflicts.filter((c) => !allowed.has(c.path));
}

/** kube's lastAppliedUpdater: after kubectl's server-side apply, an existing last-applied annotation records this configuration. */
function syncLastApplied(obj: Record<string, unknown>, config: Record<string, unknown>): void {
  const annotations = (obj.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations;
  if (!annotations || !(lastAppliedAnnotation in annotations)) return;
  const recorded = structuredClone(config) as { metadata?: { annotations?: Record<string, unknown> } };
  if (recorded.metadata?.annotations) delete recorded.metadata.annotations[lastAppliedAnnotation];
  annotations[lastAppliedAnnotation] = `${JSON.stringify(recorded)}\n`;
}

export async function apply(ctx: RegistryContext, name: string, body: unknown, opts: ApplyOptions): Promise<WriteResult & { created: boolean }> {
  const manager = opts.fieldManager;
  const refused = patchOptionsErrors('apply', { fieldManager: manager, forceGiven: opts.force !== undefined });
  if (!manager || refused.length > 0) throw invalidPatchOptions(refused);
  const { obj: config, warnings } = decodeObject(ctx.model, body, opts);
  if (!config.metadata.name) config.metadata.name = name;
  if (config.metadata.name !== name) {
    throw badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`);
  }
  const wantedVersion = config.metadata.resourceVersion;
  delete config.metadata.resourceVersion;
  try {
    const object = await runUpdate(ctx, name, 'patch', opts, (current) => {
      if (wantedVersion && wantedVersion !== current.metadata.resourceVersion) throw conflict(ctx.gr, name);
      const live = withoutSecrets(current) as unknown as Record<string, unknown>;
      const cfg = config as unknown as Record<string, unknown>;
      const merged = mergeApplied(ctx.model.schema, live, cfg) as Record<string, unknown>;
      const record = (force: boolean) =>
        recordApply(ctx.model.schema, live, cfg, merged, current.metadata.managedFields, { name: manager, operation: 'Apply' }, force, ctx.model.info.apiVersion, timestamp(ctx.now()));
      let result = record(opts.force === true);
      if (result.conflicts.length > 0) {
        const standing = conflictsAfterUpgrade(ctx, manager, live, result.conflicts);
        if (standing.length > 0) throw applyConflict(standing);
        result = record(true);
      }
      if (manager === kubectlManager) syncLastApplied(result.object, cfg);
      const obj = result.object as unknown as typeof current;
      obj.metadata.managedFields = result.managedFields;
      obj.metadata.resourceVersion = current.metadata.resourceVersion!;
      return { obj, fields: { kind: 'applied' } };
    });
    return { object, warnings, created: false };
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 404 && err.reason === 'NotFound')) throw err;
    // The body's duplicate keys were reported above, by the decode of the configuration.
    const created = await create(ctx, config, { ...opts, duplicateFields: [], fieldManager: manager, operation: 'Apply' });
    return { ...created, warnings: [...warnings, ...created.warnings], created: true };
  }
}
