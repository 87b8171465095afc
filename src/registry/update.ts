/** PUT and PATCH (and their status variants): one read-modify-write core over guaranteedUpdate. */
import { isDeepStrictEqual } from 'node:util';
import { decodeObject, type Decoding } from '../api/decode.js';
import { badRequest, conflict, invalid } from '../api/errors.js';
import { validateObjectMetaUpdate } from '../api/object-meta.js';
import { applyJsonPatch, applyMergePatch } from '../api/patch.js';
import { recordReEnable } from '../api/re-enable.js';
import { confirmRotation, keepServerOwnedStatus, recordRotation, type RotationPlan } from '../api/key-rotation.js';
import { sealSecrets, withoutSecrets, type StoredApiObject } from '../api/secrets.js';
import type { KubeObject } from '../api/types.js';
import { validateObject } from '../api/validate.js';
import { recordUpdate } from '../api/fields/managed.js';
import { keyOf, managerOf, present, timestamp, type Admit, type RegistryContext, type Writer, type WriteResult } from './context.js';
import { isRemovable } from './delete.js';
import { assertKeyUnused, holderMoved, isKeySetting, recordValueSetter, tieToSignIn } from './keys.js';
import { auditOf, describeDelete, fieldsTouched, scrubReplacedSecrets } from './observe.js';
import { keyValueInUse, storeCall } from './storage-errors.js';
import { Removal, type Preconditions } from '../store/types.js';

export interface UpdateOptions extends Writer, Decoding {
  dryRun?: boolean;
  /** `status` writes only .status; the main resource never writes .status. */
  subresource?: 'status';
  admit?: Admit;
  /**
   * The rotation subresource's write (key-rotation.ts): a plan, for a write that must change
   * spec.key (to a value that is neither the current nor the previous one), or `confirm`, which
   * starts an overlap that awaited confirmation (409 when none does). Absent, a write that changes
   * spec.key (PUT, PATCH, apply) rotates with no overlap: the previous value is refused at once,
   * with the rotation's message.
   */
  rotation?: RotationPlan | 'confirm';
  /**
   * The server's own write that must land on an object at the stored bound (store/encode.ts): a
   * leaked key's disabling, the sweep's, the collector's. Status written by the server and the
   * rotation subresource's writes count as such too.
   */
  serverWrite?: boolean;
  /** The subresource the audit trail names for the write, when not `subresource` (the rotation subresource writes the main resource). */
  observedAs?: 'rotation' | 'approval';
  /**
   * The server's own status writers (key activity, rotation) may change status.rotation; any other
   * write keeps it as stored. Never set from a request.
   */
  serverStatus?: boolean;
  /**
   * The object the server's own writer read (its uid): a write to another of the same name is a
   * 409, as a delete's preconditions are (a key reported leaked, then deleted and created again
   * under its name before the disabling write, must not disable the new one). Never set from a request.
   */
  preconditions?: Preconditions;
}

export type PatchType = 'json' | 'merge';

/** The spec-like part of an object: what makes generation rise when it changes. */
function desiredState(obj: StoredApiObject): unknown {
  const { metadata: _metadata, status: _status, ...rest } = obj;
  return rest;
}

/**
 * How a write records managedFields: as an Update by its manager, or as apply computed them. A
 * write through a subresource other than status (the rotation) names it, as kube records /scale:
 * it is not a write of the main resource, so planning never takes it for one that removed a field.
 */
export type FieldsRecord = { kind: 'update'; manager: string; reset: boolean; subresource?: string } | { kind: 'applied' };

function recordFields(ctx: RegistryContext, old: StoredApiObject, stored: StoredApiObject, how: FieldsRecord, subresource: 'status' | undefined): void {
  if (how.kind === 'applied') return;
  const writtenThrough = how.subresource ?? subresource;
  stored.metadata.managedFields = recordUpdate(
    ctx.model.schema,
    present(old),
    present(stored),
    how.reset ? [] : old.metadata.managedFields,
    { name: how.manager, operation: 'Update', ...(writtenThrough ? { subresource: writtenThrough } : {}) },
    ctx.model.info.apiVersion,
    timestamp(ctx.now()),
  );
}

function nextVersion(
  ctx: RegistryContext,
  old: StoredApiObject,
  next: KubeObject,
  opts: UpdateOptions,
  how: FieldsRecord,
): { stored: StoredApiObject; revealedKey?: string; rotated?: boolean } {
  const subresource = opts.subresource;
  if (subresource === 'status') {
    const stored = structuredClone(old);
    if (next.status === undefined) delete stored.status;
    else stored.status = next.status;
    if (!opts.serverStatus) keepServerOwnedStatus(stored, old);
    const errs = validateObject(ctx.model, withoutSecrets(stored), old);
    if (errs.length > 0) throw invalid(ctx.gk, old.metadata.name ?? '', errs);
    recordFields(ctx, old, stored, how, subresource);
    return { stored };
  }
  const meta = next.metadata;
  const was = old.metadata;
  if (ctx.model.info.kind === 'OwnedAccessKey') recordReEnable(next, old, ctx.now());
  delete meta.namespace;
  delete meta.selfLink;
  if (was.generation !== undefined) meta.generation = was.generation;
  if (!meta.uid) meta.uid = was.uid;
  meta.creationTimestamp = was.creationTimestamp;
  if (how.kind === 'update') delete meta.managedFields;
  // As kube's BeforeUpdate: an update can neither stop nor move a deletion (the stored values are
  // kept), and setting one where none was is refused below as an immutable field.
  if (meta.deletionTimestamp === null) delete meta.deletionTimestamp;
  if (meta.deletionGracePeriodSeconds === null) delete meta.deletionGracePeriodSeconds;
  if (was.deletionTimestamp) meta.deletionTimestamp = was.deletionTimestamp;
  if (was.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds === undefined) meta.deletionGracePeriodSeconds = was.deletionGracePeriodSeconds;
  if (old.status === undefined) delete next.status;
  else next.status = structuredClone(old.status);
  const errs = [
    ...validateObjectMetaUpdate(meta, was),
    ...validateObject(ctx.model, next, old),
    ...ctx.model.strategy.validateUpdate(next, old),
  ];
  if (errs.length > 0) throw invalid(ctx.gk, was.name ?? '', errs);
  const stored = next as StoredApiObject;
  const { revealedKey, rotated } = sealSecrets(stored, ctx.model.secretPaths, ctx.cipher, old);
  // A new value is a rotation: by the rotation subresource as it asked, by PUT or PATCH with no overlap.
  const plan = opts.rotation === 'confirm' ? undefined : opts.rotation;
  if (rotated) recordRotation(stored, old, plan ?? { overlapSeconds: 0, awaitConfirmation: false }, ctx.now());
  if (opts.rotation === 'confirm' && !confirmRotation(stored, ctx.now())) throw conflict(ctx.gr, was.name ?? '', 'no rotation of this key awaits confirmation');
  if (!isDeepStrictEqual(desiredState(stored), desiredState(old))) meta.generation = (was.generation ?? 0) + 1;
  recordFields(ctx, old, stored, how, subresource);
  return { stored, ...(revealedKey === undefined ? {} : { revealedKey }), ...(rotated ? { rotated } : {}) };
}

/** What the client means the object to be, and how its managedFields are to be recorded. */
export interface Intent {
  obj: KubeObject;
  fields: FieldsRecord;
}

/**
 * Reads, computes the client's intended object, finishes it with nextVersion, and writes it; an
 * update that empties a terminating object's finalizers removes it instead.
 */
export async function runUpdate(
  ctx: RegistryContext,
  name: string,
  verb: 'update' | 'patch',
  opts: UpdateOptions,
  intended: (current: StoredApiObject) => Intent,
): Promise<KubeObject> {
  let revealedKey: string | undefined;
  let before: StoredApiObject | undefined;
  // Whether the last decision removed the object: the store answers a Removal with the object
  // itself, so this is how a write that removed it is told from one that kept it.
  let removed = false as boolean; // `as`: set in tryUpdate, which TypeScript's narrowing does not see
  const tryUpdate = async (current: StoredApiObject): Promise<StoredApiObject | Removal<StoredApiObject>> => {
    before = current;
    const intent = intended(current);
    const result = nextVersion(ctx, current, intent.obj, opts, intent.fields);
    revealedKey = result.revealedKey;
    const setsKey = !opts.subresource && isKeySetting(present(current), result.stored, revealedKey);
    if (setsKey) tieToSignIn(ctx, result.stored, opts.signIn);
    // Only a new value, or a new holder, has a new setter: a re-enable, or the same value written
    // again, sets none (its writer may never have held the value: found by a review).
    if (!opts.subresource) recordValueSetter(ctx, result.stored, current, (setsKey && result.rotated === true) || holderMoved(current, result.stored), opts.valueSetBy);
    const prepared = (!opts.subresource && (await ctx.prepareWrite?.(ctx, result.stored, current))) || [];
    await opts.admit?.({
      verb,
      old: present(current),
      object: present(result.stored),
      ...(setsKey ? { setsKey: true } : {}),
      ...(opts.subresource ? { subresource: opts.subresource } : {}),
      ...(opts.dryRun ? { dryRun: true } : {}),
    });
    if (prepared.length > 0) throw invalid(ctx.gk, name, prepared);
    // A rotation must give the key a value it has not got: not its current one, nor its previous
    // (a PUT or PATCH of spec.key is a rotation too: setting the previous value back would undo one).
    if (typeof opts.rotation === 'object' && !result.rotated) throw keyValueInUse(ctx.gk, name);
    if (result.rotated && current.sealed?.previousKeyHash !== undefined && result.stored.sealed?.keyHash === current.sealed.previousKeyHash) throw keyValueInUse(ctx.gk, name);
    if (revealedKey !== undefined) await assertKeyUnused(ctx, result.stored, name);
    removed = isRemovable(result.stored, ctx.now());
    return removed ? new Removal(result.stored) : result.stored;
  };
  // The store records the event with the write; an update that changed nothing writes nothing and records nothing.
  const subresource = opts.observedAs ?? opts.subresource;
  const audit = auditOf(ctx, opts, (w) => {
    if (w.removed) return describeDelete(w);
    const after = present(w.object);
    return { verb, ...(subresource ? { subresource } : {}), object: after, fields: fieldsTouched(ctx, w.before && present(w.before), after) };
  });
  const decided = opts.dryRun
    ? await tryUpdate(await storeCall(ctx, name, () => ctx.store.get<StoredApiObject>(keyOf(ctx, name))))
    : await storeCall(ctx, name, () => ctx.store.guaranteedUpdate<StoredApiObject>(keyOf(ctx, name), opts.preconditions, tryUpdate, { audit, ...(opts.serverWrite || opts.serverStatus || opts.rotation !== undefined ? { mayPassStoredBound: true } : {}) }));
  const object = decided instanceof Removal ? decided.object : decided;
  // Removed, it is gone as by a delete: its secrets leave the history too (delete.ts does the same).
  if (!opts.dryRun) await scrubReplacedSecrets(ctx, name, removed ? object : before, removed ? undefined : object);
  return present(object, revealedKey);
}

/** PUT: the body is the whole object as the client last read it, resourceVersion included. */
export async function update(ctx: RegistryContext, name: string, body: unknown, opts: UpdateOptions = {}): Promise<WriteResult> {
  const { obj, warnings, resetManagedFields } = decodeObject(ctx.model, body, { ...opts, update: true });
  // A body without a name is refused too (kube's checkName): the URL does not fill it in.
  if ((obj.metadata.name ?? '') !== name) {
    throw badRequest(`the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${name})`);
  }
  const rv = obj.metadata.resourceVersion;
  if (!rv) {
    throw invalid(ctx.gk, name, [
      { type: 'Invalid', field: 'metadata.resourceVersion', rendered: '0x0', detail: 'must be specified for an update' },
    ]);
  }
  const object = await runUpdate(ctx, name, 'update', opts, (current) => {
    if (current.metadata.resourceVersion !== rv) throw conflict(ctx.gr, name);
    const uid = obj.metadata.uid;
    if (uid && uid !== current.metadata.uid) {
      throw conflict(ctx.gr, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
    }
    return { obj: structuredClone(obj), fields: { kind: 'update', manager: managerOf(opts), reset: resetManagedFields } };
  });
  return { object, warnings };
}

/** PATCH: applied to the current object; a resourceVersion in the patch is a precondition. */
export async function patch(
  ctx: RegistryContext,
  name: string,
  type: PatchType,
  body: unknown,
  opts: UpdateOptions = {},
): Promise<WriteResult> {
  let warnings: string[] = [];
  const object = await runUpdate(ctx, name, 'patch', opts, (current) => {
    const external = withoutSecrets(current);
    const patched = type === 'json' ? applyJsonPatch(external, body) : applyMergePatch(external, body);
    const decoded = decodeObject(ctx.model, patched, { ...opts, update: true });
    warnings = decoded.warnings;
    const meta = decoded.obj.metadata;
    if (!meta.resourceVersion) meta.resourceVersion = current.metadata.resourceVersion!;
    else if (meta.resourceVersion !== current.metadata.resourceVersion) throw conflict(ctx.gr, name);
    // A patch that leaves managedFields as they were has not asked for a reset.
    const reset = decoded.resetManagedFields && (current.metadata.managedFields ?? []).length > 0;
    return { obj: decoded.obj, fields: { kind: 'update', manager: managerOf(opts), reset } };
  });
  return { object, warnings };
}
