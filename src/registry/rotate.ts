/**
 * The rotation subresource of an access key: a new value with an overlap for the previous one, or
 * the confirmation that starts an overlap that awaited it. A rotation writes the key itself, as a
 * PUT of spec.key would (the same validation, admission with setsKey, uniqueness of the value, audit
 * event), with the overlap it asked for; the rules are in src/api/key-rotation.ts.
 */
import type { Decoding } from '../api/decode.js';
import { conflict } from '../api/errors.js';
import { decodeKeyRotation, keyRotationKind, replayOf } from '../api/key-rotation.js';
import { generateKey } from '../api/key-format.js';
import { hashKey, withoutSecrets, type StoredApiObject } from '../api/secrets.js';
import { isJsonMap } from '../api/types.js';
import { managerOf, present, type Admit, type RegistryContext, type WriteResult, type Writer } from './context.js';
import { runUpdate } from './update.js';

export interface RotateOptions extends Writer, Decoding {
  dryRun?: boolean;
  admit?: Admit;
}

/**
 * Rotates (201, the response carrying the new value once) or confirms (200). The body is a
 * KeyRotation; `created` says which status code the rotation earns.
 */
export async function rotate(ctx: RegistryContext, name: string, body: unknown, opts: RotateOptions = {}): Promise<WriteResult & { created: boolean }> {
  const gk = { group: ctx.gk.group, kind: keyRotationKind };
  const { request, warnings } = decodeKeyRotation(body, ctx.model.info.apiVersion, gk, name, opts);
  const fields = { kind: 'update' as const, manager: managerOf(opts), reset: false, subresource: 'rotation' };
  // The body's resourceVersion is a precondition, as a PUT's is: a confirmation names the rotation it confirms.
  const unchanged = (current: StoredApiObject) => {
    if (request.resourceVersion !== undefined && current.metadata.resourceVersion !== request.resourceVersion) throw conflict(ctx.gr, name);
  };
  if (request.kind === 'confirm') {
    const auditAnnotations = { 'rotation.management.service/confirmed': 'true' };
    const object = await runUpdate(ctx, name, 'update', { ...opts, rotation: 'confirm', observedAs: 'rotation', auditAnnotations }, (current) => {
      unchanged(current);
      return { obj: withoutSecrets(structuredClone(current)), fields };
    });
    return { object, warnings, created: false };
  }
  const key = request.key ?? generateKey();
  const plan = { overlapSeconds: request.overlapSeconds, awaitConfirmation: request.awaitConfirmation, ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}) };
  const auditAnnotations = {
    'rotation.management.service/overlap-seconds': String(plan.overlapSeconds),
    ...(plan.awaitConfirmation ? { 'rotation.management.service/await-confirmation': 'true' } : {}),
    ...(request.key === undefined ? { 'rotation.management.service/generated': 'true' } : {}),
  };
  let replayed: { object: StoredApiObject; message: string } | undefined;
  const write = runUpdate(ctx, name, 'update', { ...opts, rotation: plan, observedAs: 'rotation', auditAnnotations }, (current) => {
    // A retry of a rotation already made (its idempotency key is the last rotation's): that one,
    // written no second time. Judged on the version the write would replace, so two racing
    // requests with one idempotency key rotate once. Before the precondition: the retry carries
    // the version the first request saw.
    const replay = replayOf(current, request, hashKey);
    if (replay && 'mismatch' in replay) throw conflict(ctx.gr, name, replay.mismatch);
    if (replay) {
      replayed = { object: current, message: replay.replay };
      throw replayedRotation;
    }
    unchanged(current);
    const next = withoutSecrets(structuredClone(current));
    if (isJsonMap(next.spec)) next.spec.key = key;
    return { obj: next, fields };
  });
  const object = await write.catch((err: unknown) => {
    if (err !== replayedRotation || !replayed) throw err;
    return undefined;
  });
  // A replay answers 200 with the key as it is (never a value) and says, as a warning, what happened.
  if (!object) return { object: present(replayed!.object), warnings: [...warnings, replayed!.message], created: false };
  return { object, warnings, created: true };
}

/** Ends a rotation's update without a write (its retry was recognised); caught by rotate() only. */
const replayedRotation = new Error('a replayed rotation');
