/**
 * Rotation of an access key's value with an overlap: the previous value keeps working for a while
 * (or until the rotation is confirmed), so whoever holds it can switch without a failed request.
 *
 * Where the truth lives: `sealed.previousKeyHash` says which value is the previous one (never in
 * the API), and `status.rotation` says until when it works. Both are written by the server only:
 * sealed is rebuilt by every write from what the server keeps, and status.rotation is kept as
 * stored by every client write (PUT and PATCH of status included; see keepServerOwnedStatus).
 * A previous value with no valid-until time and no pending confirmation is refused: fail closed.
 *
 * Everything here is pure: the registry (src/registry/rotate.ts) reads, decides here, and writes.
 */
import { badRequest, invalid, type GroupKind } from './errors.js';
import type { FieldError } from './field-errors.js';
import type { Decoding } from './decode.js';
import { isAcceptedKeyValue, keyValueRule } from './key-format.js';
import type { AccessKeyRotationStatus } from './generated/schema-types.js';
import type { StoredApiObject } from './secrets.js';
import { isJsonMap } from './types.js';

/** The longest overlap a rotation may ask for: 30 days. */
export const maxOverlapSeconds = 2_592_000;

/** The kind of the rotation subresource's request body. */
export const keyRotationKind = 'KeyRotation';

/** What a rotation asks for: a new value (given or generated), how long the previous one keeps working, and when that starts. */
export interface RotationPlan {
  overlapSeconds: number;
  /** The previous value works until the rotation is confirmed; the overlap runs from then. */
  awaitConfirmation: boolean;
  /** The client's name for this rotation: a retry carrying it gets this rotation back, not another (see replayOf). */
  idempotencyKey?: string;
}

/** The spec of a KeyRotation body, as a client sends it. */
export interface KeyRotationSpec {
  /** The new value (key-format.ts: isAcceptedKeyValue); the server generates one in the format when absent. */
  key?: string;
  /** 0 to 2592000 (30 days); default 0. */
  overlapSeconds?: number;
  awaitConfirmation?: boolean;
  /** Confirms a rotation that awaits confirmation; nothing else may be set with it. */
  confirm?: boolean;
  /** Names this rotation (1 to 128 of [A-Za-z0-9._:-], e.g. a UUID): a retry with the same one rotates no second time. */
  idempotencyKey?: string;
}

/**
 * A decoded KeyRotation: a rotation (key absent: the server generates one), or the confirmation of
 * one. `resourceVersion` (the body's metadata.resourceVersion) is a precondition: the key must
 * still be at that version (409 otherwise), so a confirmation names the rotation it confirms.
 */
export type KeyRotationRequest = (({ kind: 'rotate'; key?: string } & RotationPlan) | { kind: 'confirm' }) & { resourceVersion?: string };


/** An idempotency key's shape: a UUID fits, and nothing a header or a log line could misread. */
const idempotencyKeyShape = /^[A-Za-z0-9._:-]{1,128}$/;

/** RFC 3339 in UTC with second precision, as kube writes metav1.Time. */
const timestamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * Decodes a KeyRotation body as the API decodes objects: apiVersion and kind filled in when absent
 * and refused (400) when wrong, unknown fields and duplicate keys per fieldValidation (Strict: 400,
 * Warn: warnings, Ignore), and each bad field a 422 Invalid naming it. A key value is never echoed.
 */
export function decodeKeyRotation(
  body: unknown,
  apiVersion: string,
  gk: GroupKind,
  name: string,
  decoding: Decoding = {},
): { request: KeyRotationRequest; warnings: string[] } {
  if (!isJsonMap(body)) throw badRequest(`the request body must be a ${keyRotationKind} object, not ${jsonType(body)}`);
  const version = body.apiVersion ?? '';
  if (version !== '' && version !== apiVersion) {
    throw badRequest(`the API version in the data (${String(version)}) does not match the expected API version (${apiVersion})`);
  }
  const kind = body.kind ?? '';
  if (kind !== '' && kind !== keyRotationKind) throw badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${keyRotationKind})`);
  const unknown: string[] = [];
  for (const k of Object.keys(body)) if (!['apiVersion', 'kind', 'metadata', 'spec'].includes(k)) unknown.push(k);
  const errs: FieldError[] = [];
  const meta = body.metadata ?? {};
  const rv = isJsonMap(meta) ? meta.resourceVersion : undefined;
  if (rv !== undefined && (typeof rv !== 'string' || rv === '')) errs.push({ type: 'Invalid', field: 'metadata.resourceVersion', value: rv, detail: 'must be the resourceVersion of the key, as a string' });
  const precondition = typeof rv === 'string' && rv !== '' ? { resourceVersion: rv } : {};
  const spec = body.spec ?? {};
  if (!isJsonMap(spec)) errs.push({ type: 'TypeInvalid', field: 'spec', value: jsonType(spec), detail: `spec in body must be of type object: "${jsonType(spec)}"` });
  const s = isJsonMap(spec) ? spec : {};
  for (const k of Object.keys(s)) if (!['key', 'overlapSeconds', 'awaitConfirmation', 'confirm', 'idempotencyKey'].includes(k)) unknown.push(`spec.${k}`);
  if (s.idempotencyKey !== undefined && (typeof s.idempotencyKey !== 'string' || !idempotencyKeyShape.test(s.idempotencyKey))) {
    errs.push({ type: 'Invalid', field: 'spec.idempotencyKey', value: s.idempotencyKey, detail: 'must be 1 to 128 characters of [A-Za-z0-9._:-] (a UUID, say)' });
  }
  if (s.key !== undefined && (typeof s.key !== 'string' || !isAcceptedKeyValue(s.key))) {
    errs.push({ type: 'Invalid', field: 'spec.key', detail: keyValueRule });
  }
  const overlap = s.overlapSeconds;
  if (overlap !== undefined && (typeof overlap !== 'number' || !Number.isInteger(overlap) || overlap < 0 || overlap > maxOverlapSeconds)) {
    errs.push({ type: 'Invalid', field: 'spec.overlapSeconds', value: overlap, detail: `must be a whole number of seconds from 0 to ${maxOverlapSeconds} (30 days)` });
  }
  for (const flag of ['awaitConfirmation', 'confirm'] as const) {
    if (s[flag] !== undefined && typeof s[flag] !== 'boolean') errs.push({ type: 'TypeInvalid', field: `spec.${flag}`, value: s[flag], detail: 'must be a boolean' });
  }
  const confirm = s.confirm === true;
  const withConfirm = (['key', 'overlapSeconds', 'awaitConfirmation', 'idempotencyKey'] as const).filter((f) => s[f] !== undefined);
  if (confirm && withConfirm.length > 0) {
    errs.push({ type: 'Invalid', field: 'spec.confirm', value: true, detail: `a confirmation carries nothing else; found ${withConfirm.map((f) => `spec.${f}`).join(', ')}` });
  }
  if (errs.length > 0) throw invalid(gk, name, errs);
  const problems = [...(decoding.duplicateFields ?? []), ...unknown.sort().map((f) => `unknown field "${f}"`)];
  if (problems.length > 0 && decoding.fieldValidation === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
  const warnings = (decoding.fieldValidation ?? 'Warn') === 'Warn' ? problems : [];
  if (confirm) return { request: { kind: 'confirm', ...precondition }, warnings };
  const request: KeyRotationRequest = {
    kind: 'rotate',
    ...precondition,
    overlapSeconds: typeof overlap === 'number' ? overlap : 0,
    awaitConfirmation: s.awaitConfirmation === true,
    ...(typeof s.key === 'string' ? { key: s.key } : {}),
    ...(typeof s.idempotencyKey === 'string' ? { idempotencyKey: s.idempotencyKey } : {}),
  };
  return { request, warnings };
}

export const rotationOf = (obj: StoredApiObject): AccessKeyRotationStatus | undefined =>
  (isJsonMap(obj.status) && isJsonMap(obj.status.rotation) ? (obj.status.rotation as AccessKeyRotationStatus) : undefined);

/**
 * Records a rotation on `next`, whose sealed.keyHash sealSecrets just changed from `old`'s: which
 * value becomes the previous one, and status.rotation. A previous value still awaiting
 * confirmation is the one clients hold: it stays, and only the current value (never confirmed
 * delivered) is replaced. Otherwise the current value becomes the previous one, and an older
 * previous value is dropped.
 */
export function recordRotation(next: StoredApiObject, old: StoredApiObject, plan: RotationPlan, now: Date): void {
  const was = rotationOf(old);
  const keepsPrevious = was?.awaitingConfirmation === true && old.sealed?.previousKeyHash !== undefined;
  const previousKeyHash = keepsPrevious ? old.sealed!.previousKeyHash : old.sealed?.keyHash;
  if (next.sealed && previousKeyHash !== undefined && previousKeyHash !== next.sealed.keyHash) next.sealed.previousKeyHash = previousKeyHash;
  else if (next.sealed) delete next.sealed.previousKeyHash;
  const rotation: AccessKeyRotationStatus = { rotatedAt: timestamp(now.getTime()), overlapSeconds: plan.overlapSeconds };
  if (plan.idempotencyKey !== undefined) rotation.idempotencyKey = plan.idempotencyKey;
  if (plan.awaitConfirmation) rotation.awaitingConfirmation = true;
  else rotation.previousValidUntil = timestamp(now.getTime() + plan.overlapSeconds * 1000);
  // The use status.lastActivity records was by a value that is now the previous one, or gone.
  const lastActivity = isJsonMap(old.status) && typeof old.status.lastActivity === 'string' ? old.status.lastActivity : undefined;
  if (keepsPrevious) {
    if (was?.lastUsedValue === 'Previous') rotation.lastUsedValue = 'Previous';
    if (was?.previousLastActivity) rotation.previousLastActivity = was.previousLastActivity;
  } else if (lastActivity && was?.lastUsedValue !== 'Previous') {
    rotation.lastUsedValue = 'Previous';
    rotation.previousLastActivity = lastActivity;
  } else if (was?.previousLastActivity) {
    // The last use was by the value this rotation drops: its record is kept (a forensic trace of
    // a retired value's use) until a newer use of a previous value replaces it.
    rotation.previousLastActivity = was.previousLastActivity;
  }
  next.status = { ...(isJsonMap(next.status) ? next.status : {}), rotation };
}

/**
 * A rotation request retried with the idempotency key of the key's last rotation: that rotation,
 * not a new one. `replay` with what to tell the client (the value is never in it), or `mismatch`
 * when the request under that idempotency key asks for something else; undefined: a new rotation.
 * Only the last rotation's idempotency key is kept: it is recorded with the rotation, in the same
 * write, so every replica answers alike.
 */
export function replayOf(current: StoredApiObject, request: { key?: string; overlapSeconds: number; idempotencyKey?: string }, keyHash: (key: string) => string): { replay: string } | { mismatch: string } | undefined {
  const rotation = rotationOf(current);
  if (request.idempotencyKey === undefined || rotation?.idempotencyKey !== request.idempotencyKey) return undefined;
  const made = `the rotation with idempotency key ${request.idempotencyKey} was made at ${rotation.rotatedAt ?? 'an unknown time'}`;
  if (rotation.overlapSeconds !== request.overlapSeconds || (request.key !== undefined && current.sealed?.keyHash !== keyHash(request.key))) {
    return { mismatch: `${made} with other parameters: an idempotency key names one request; send a new one for a new rotation` };
  }
  const previous = rotation.awaitingConfirmation ? 'the previous value keeps working until a rotation is confirmed' : `the previous value works until ${rotation.previousValidUntil ?? 'its overlap ends'}`;
  if (request.key !== undefined) return { replay: `${made}; nothing was changed: the key's value is the one this request carries` };
  return {
    replay: `${made}; nothing was changed. The value the server generated was shown once, in the answer to the first request, and cannot be shown again: if that answer was lost, rotate again with a new idempotency key (${previous})`,
  };
}

/** Starts the overlap of a rotation that awaited confirmation; false when none does. */
export function confirmRotation(stored: StoredApiObject, now: Date): boolean {
  const rotation = rotationOf(stored);
  if (rotation?.awaitingConfirmation !== true || !stored.sealed?.previousKeyHash) return false;
  delete rotation.awaitingConfirmation;
  rotation.previousValidUntil = timestamp(now.getTime() + (rotation.overlapSeconds ?? 0) * 1000);
  return true;
}

/**
 * Why the key's previous value may not authenticate at `now`, or undefined while it may: awaiting
 * confirmation, or before previousValidUntil. Anything else (no rotation status, a time that does
 * not parse) refuses.
 */
export function previousValueRefusal(key: StoredApiObject, now: Date): string | undefined {
  const rotation = rotationOf(key);
  if (rotation?.awaitingConfirmation === true) return undefined;
  const until = rotation?.previousValidUntil;
  if (until !== undefined && now.getTime() < Date.parse(until)) return undefined;
  return `access key "${key.metadata.name ?? ''}" was rotated at ${rotation?.rotatedAt ?? 'an unknown time'}; its previous value stopped working at ${until ?? rotation?.rotatedAt ?? 'once it was rotated'}`;
}

/**
 * The status a client's write leaves: status.rotation stays as the server wrote it (absent stays
 * absent), whatever the write sent, so no client extends or revives a previous value.
 */
export function keepServerOwnedStatus(next: StoredApiObject, old: StoredApiObject): void {
  const rotation = rotationOf(old);
  if (rotation === undefined) {
    if (isJsonMap(next.status)) delete next.status.rotation;
    return;
  }
  next.status = { ...(isJsonMap(next.status) ? next.status : {}), rotation: structuredClone(rotation) };
}
