/**
 * Keys that go to a sink (annotation gitops.management.service/key-secret): what a step must do
 * to get a key's value there, decided here as data, and the sending itself. Every API write it
 * implies (the new value, the confirmation, the record) is made by apply/key-writes.ts, in the
 * order these rules need:
 *
 * - after the server made a key (create) or the reconciler set a new one, the key is delivered,
 *   and only then is the delivery recorded on the object (annotation key-delivered = the target). A
 *   failed delivery leaves the object unrecorded, so the next run's plan rotates the key and
 *   delivers it again;
 * - scheduled rotations (rotate-every) go through the server's rotation subresource instead: the
 *   new value is made awaiting confirmation (the previous one keeps working, with no deadline), it
 *   is delivered, and only then confirmed, which starts the overlap. A delivery that fails leaves
 *   the rotation unconfirmed: every holder of the previous value keeps working, and the next run
 *   rotates again (planned as `unconfirmed`) and delivers.
 */
import { randomUUID } from 'node:crypto';
import { generateKey } from '../../api/key-format.js';
import type { KeyRotationSpec } from '../../api/key-rotation.js';
import { isJsonMap, type KubeObject } from '../../api/types.js';
import { sinkFile, writeSink, type FileSinkOptions } from './file-sink.js';
import { describeTarget, KeyDeliveryError, parseSecretTarget, type KeyDelivery, type SecretTarget } from './github-secrets.js';
import { annotations } from '../plan/annotations.js';
import type { PlanStep } from '../plan/plan.js';

/** What a delivery did, for the change-set entry. */
export type Delivered = { keySecret: string; previousValidUntil?: string } | { error: string };

/** How keys reach their sinks: GitHub (with GITHUB_TOKEN) and files. */
export interface Sinks {
  keyDelivery?: KeyDelivery;
  fileSinks?: FileSinkOptions;
  /** --key-dir: where relative file: paths start, unless fileSinks says otherwise. */
  keyDir?: string;
}

/** A JSON pointer segment: `/` and `~` escaped. */
const pointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The target of an action, or why the key cannot go there (before anything is written). */
export function deliveryTarget(action: PlanStep, sinks: Sinks): SecretTarget | { error: string } {
  const target = parseSecretTarget(action.keySecret!);
  if (typeof target === 'string') return { error: `${action.kind}/${action.name}: ${annotations.keySecret} ${target}` };
  if (target.type !== 'file' && !sinks.keyDelivery) {
    const what = action.type === 'create' ? 'not created' : 'not rotated';
    const may = target.type === 'org' ? "the organization's secrets" : target.type === 'environment' ? "the environment's secrets" : "the repository's secrets";
    return { error: `${action.kind}/${action.name}: its key goes to ${describeTarget(target)} but GITHUB_TOKEN is not set: ${what} (set GITHUB_TOKEN to a token that may write ${may})` };
  }
  return target;
}

const deliveredPath = `/metadata/annotations/${pointer(annotations.keyDelivered)}`;

/**
 * key-delivered while a never-delivered key's first value is on its way: if the delivery succeeds
 * but recording it fails, the next run sees a key that may be held and rotates it with the overlap,
 * never at once.
 */
export const pendingDelivery = (keySecret: string) => `pending:${keySecret}`;

/** The patch that records on an object that its current value reached `sink` (key-delivered, replacing `pending:`). */
export const deliveryRecord = (sink: string): unknown[] => [{ op: 'add', path: deliveredPath, value: sink }];

/** The patch that sets a new key at once: the planned one plus a new value (marked pending delivery), which it returns alongside. */
export function newKeyPatch(action: PlanStep): { patch: unknown[]; key: string } {
  const key = generateKey();
  return { patch: [...(action.patch ?? []), { op: 'add', path: '/spec/key', value: key }, { op: 'add', path: deliveredPath, value: pendingDelivery(action.keySecret!) }], key };
}

/**
 * The rotation a scheduled rotation asks the server for: awaiting confirmation, with the planned
 * overlap, named by an idempotency key so that a request sent again rotates at most once.
 */
export function rotationRequest(action: PlanStep): KeyRotationSpec {
  return { overlapSeconds: action.rotation!.overlapSeconds, awaitConfirmation: true, idempotencyKey: randomUUID() };
}

/** The new value a rotation answered with; none when the answer was a replay (a value is shown once). */
export function rotatedValue(rotated: KubeObject): string | undefined {
  return isJsonMap(rotated.spec) && typeof rotated.spec.key === 'string' ? rotated.spec.key : undefined;
}

/** When the previous value stops working, as the server set it on confirmation. */
export function previousValidUntil(confirmed: KubeObject): string | undefined {
  const status = isJsonMap(confirmed.status) && isJsonMap(confirmed.status.rotation) ? confirmed.status.rotation : {};
  return typeof status.previousValidUntil === 'string' ? status.previousValidUntil : undefined;
}

/** A key moved to a new sink (or never recorded) is recorded only once its rotation is confirmed: a failure before that rotates again with the overlap. */
export const recordsAfterConfirm = (action: PlanStep) => action.rotation?.reason === 'moved' || action.rotation?.reason === 'unrecorded';

/**
 * Whether a confirmation that lost a race (409) may be made again at the key's current version:
 * only when its generation is still the rotation's (no value or spec change since, only status
 * writes such as the server's record of the key's use).
 */
export function mayConfirmAgain(made: KubeObject['metadata'], now: KubeObject | undefined): now is KubeObject {
  return made.generation !== undefined && !!now?.metadata.resourceVersion && now.metadata.generation === made.generation;
}

const fileOptions = (sinks: Sinks): FileSinkOptions => ({ ...(sinks.keyDir ? { base: sinks.keyDir } : {}), ...sinks.fileSinks });

/**
 * Why a file: sink can never take the key (outside the key folder, in the source repository, no
 * --key-dir), checked before anything is made or rotated: a value whose delivery can only fail is
 * never made. undefined: the sink may be written (GitHub sinks are only known by trying).
 */
export async function sinkRefusal(action: PlanStep, target: SecretTarget, sinks: Sinks): Promise<string | undefined> {
  if (target.type !== 'file') return undefined;
  const what = action.type === 'create' ? 'not created' : 'not rotated';
  return sinkFile(target, fileOptions(sinks)).then(
    () => undefined,
    (err: unknown) => `${action.kind}/${action.name}: ${what}: ${messageOf(err)}`,
  );
}

/** Sends a value to its sink (never the API); throws KeyDeliveryError (naming the sink, never the value). */
export async function sendKey(target: SecretTarget, key: string, sinks: Sinks): Promise<void> {
  try {
    if (target.type === 'file') await writeSink(target, key, fileOptions(sinks));
    else await sinks.keyDelivery!.deliver(target, key);
  } catch (err) {
    if (err instanceof KeyDeliveryError) throw err;
    throw new KeyDeliveryError(`the key was not delivered to ${describeTarget(target)}: ${messageOf(err)}`);
  }
}
