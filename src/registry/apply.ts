/**
 * Server-side apply (PATCH application/apply-patch+yaml): the manager's configuration is merged
 * into the live object by the schema; it owns exactly the fields it applies; conflicts with other
 * managers are a 409 unless forced. Applying to a missing object creates it.
 */
import { decodeObject, type FieldValidation } from '../api/decode.js';
import { ApiError, badRequest, conflict } from '../api/errors.js';
import { pathString } from '../api/fields/fieldset.js';
import { recordApply, type Conflict } from '../api/fields/managed.js';
import { mergeApplied } from '../api/fields/merge.js';
import { withoutSecrets } from '../api/secrets.js';
import type { ManagedFieldsEntry } from '../api/types.js';
import type { Admit } from './admission.js';
import type { Requester } from './write-observer.js';
import { timestamp, type RegistryContext, type WriteResult } from './context.js';
import { create } from './create.js';
import { runUpdate } from './update.js';

export interface ApplyOptions {
  fieldManager?: string;
  requester?: Requester;
  force?: boolean;
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
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

export async function apply(ctx: RegistryContext, name: string, body: unknown, opts: ApplyOptions): Promise<WriteResult & { created: boolean }> {
  const manager = opts.fieldManager;
  if (!manager) throw badRequest('fieldManager is required for apply requests: set the fieldManager query parameter');
  const { obj: config, warnings } = decodeObject(ctx.model, body, opts.fieldValidation);
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
      const result = recordApply(
        ctx.model.schema,
        live,
        cfg,
        merged,
        current.metadata.managedFields,
        { name: manager, operation: 'Apply' },
        opts.force === true,
        ctx.model.info.apiVersion,
        timestamp(ctx.now()),
      );
      if (result.conflicts.length > 0) throw applyConflict(result.conflicts);
      const obj = result.object as unknown as typeof current;
      obj.metadata.managedFields = result.managedFields;
      obj.metadata.resourceVersion = current.metadata.resourceVersion!;
      return { obj, fields: { kind: 'applied' } };
    });
    return { object, warnings, created: false };
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 404 && err.reason === 'NotFound')) throw err;
    const created = await create(ctx, config, { ...opts, fieldManager: manager, operation: 'Apply' });
    return { ...created, warnings: [...warnings, ...created.warnings], created: true };
  }
}
