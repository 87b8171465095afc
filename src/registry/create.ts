/** POST: kube's BeforeCreate, validation, sealing, and generateName retries. */
import { recordReEnable } from '../api/re-enable.js';
import { randomUUID } from 'node:crypto';
import { decodeObject, type Decoding } from '../api/decode.js';
import { alreadyExists, ApiError, badRequest, generateNameConflict, invalid } from '../api/errors.js';
import { generateNamePrefixErrors } from '../api/names.js';
import { sealSecrets, type StoredApiObject } from '../api/secrets.js';
import { isJsonMap } from '../api/types.js';
import { validateObject } from '../api/validate.js';
import { recordUpdate, type Operation } from '../api/fields/managed.js';
import { keyOf, managerOf, present, timestamp, type Admit, type RegistryContext, type Writer, type WriteResult } from './context.js';
import { assertKeyUnused, recordValueSetter, tieToSignIn } from './keys.js';
import { auditOf, fieldsTouched } from './observe.js';
import { storeCall, storeCallUnless, toApiError } from './storage-errors.js';

async function exists(ctx: RegistryContext, name: string): Promise<boolean> {
  return (await storeCallUnless(ctx, name, 'NotFound', () => ctx.store.get(keyOf(ctx, name)))) !== undefined;
}

export interface CreateOptions extends Writer, Decoding {
  dryRun?: boolean;
  admit?: Admit;
  /** Apply when server-side apply creates the object. */
  operation?: Operation;
}

const generateNameAttempts = 8;

export async function create(ctx: RegistryContext, body: unknown, opts: CreateOptions = {}): Promise<WriteResult> {
  const { obj, warnings } = decodeObject(ctx.model, body, opts);
  const meta = obj.metadata;
  if (meta.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
  // Both kinds are cluster-scoped; the server owns identity, time and lifecycle fields.
  delete meta.namespace;
  delete meta.selfLink;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete obj.status;
  meta.uid = randomUUID();
  meta.creationTimestamp = timestamp(ctx.now());
  meta.generation = 1;
  // A value the server generates (256 random bits) cannot be in use: no uniqueness read for it. The
  // store's unique index still answers a collision (or a concurrent create) with the same 422.
  const keySupplied = isJsonMap(obj.spec) && obj.spec.key !== undefined;
  ctx.model.strategy.prepareForCreate(obj);
  if (ctx.model.info.kind === 'OwnedAccessKey') recordReEnable(obj, undefined, ctx.now());
  const prefix = meta.generateName;
  const generated = !meta.name && typeof prefix === 'string' && prefix !== '' && generateNamePrefixErrors(prefix).length === 0;
  if (generated) meta.name = ctx.generateName(prefix);

  const errs = validateObject(ctx.model, obj);
  if (errs.length > 0) throw invalid(ctx.gk, meta.name ?? prefix ?? '', errs);
  const stored = obj as StoredApiObject;
  const { revealedKey } = sealSecrets(stored, ctx.model.secretPaths, ctx.cipher);
  // The creator owns every field it set (secrets are sealed away first, so never recorded; fields
  // the server sets next, such as a team key's binding, are not the creator's).
  meta.managedFields = recordUpdate(
    ctx.model.schema,
    undefined,
    present(stored),
    undefined,
    { name: managerOf(opts), operation: opts.operation ?? 'Update' },
    ctx.model.info.apiVersion,
    timestamp(ctx.now()),
  );
  tieToSignIn(ctx, stored, opts.signIn);
  recordValueSetter(ctx, stored, undefined, true, opts.valueSetBy);
  const prepared = (await ctx.prepareWrite?.(ctx, stored, undefined)) ?? [];
  await opts.admit?.({ verb: 'create', object: present(stored), setsKey: true, ...(opts.dryRun ? { dryRun: true } : {}) });
  if (prepared.length > 0) throw invalid(ctx.gk, meta.name ?? '', prepared);
  if (revealedKey !== undefined && keySupplied) await assertKeyUnused(ctx, stored, meta.name ?? '');

  for (let attempt = 1; ; attempt++) {
    const name = meta.name!;
    try {
      if (opts.dryRun) {
        if (await exists(ctx, name)) throw alreadyExists(ctx.gr, name);
        return { object: present(stored, revealedKey), warnings };
      }
      const audit = auditOf(ctx, opts, (w) => ({ verb: 'create', object: present(w.object), fields: fieldsTouched(ctx, undefined, present(w.object)) }));
      const created = await storeCall(ctx, name, () => ctx.store.create<StoredApiObject>(keyOf(ctx, name), stored, { audit }));
      return { object: present(created, revealedKey), warnings };
    } catch (err) {
      const taken = err instanceof ApiError && err.reason === 'AlreadyExists';
      if (!generated || !taken) throw err;
      if (attempt >= generateNameAttempts) throw generateNameConflict(ctx.gr, name);
      meta.name = ctx.generateName(prefix);
    }
  }
}
