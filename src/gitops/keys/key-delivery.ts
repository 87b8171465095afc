/**
 * Keys that go to a sink (annotation gitops.management.service/key-secret): after the server
 * made a key (create) or the reconciler rotated one, the key is delivered, and only then is the
 * delivery recorded on the object (annotation key-delivered = the target). A failed delivery
 * leaves the object unrecorded, so the next run's plan rotates the key and delivers it again.
 *
 * Scheduled rotations (rotate-every) go through the server's rotation subresource instead: the
 * new value is made awaiting confirmation (the previous one keeps working, with no deadline), it
 * is delivered, and only then confirmed, which starts the overlap. A delivery that fails leaves
 * the rotation unconfirmed: every holder of the previous value keeps working, and the next run
 * rotates again (planned as `unconfirmed`) and delivers.
 */
import { randomUUID } from 'node:crypto';
import { generateKey } from '../../api/key-format.js';
import { isJsonMap } from '../../api/types.js';
import { ClientError, type ApiClient } from '../../client/types.js';
import type { KubeObject } from '../../api/types.js';
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

/** The patch that rotates a key: the planned one plus a new key (marked pending delivery), which it returns alongside. */
export function rotation(action: PlanStep): { patch: unknown[]; key: string } {
  const key = generateKey();
  return { patch: [...(action.patch ?? []), { op: 'add', path: '/spec/key', value: key }, { op: 'add', path: deliveredPath, value: pendingDelivery(action.keySecret!) }], key };
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

/** Sends a value to its sink; throws KeyDeliveryError (naming the sink, never the value). */
async function send(target: SecretTarget, key: string, sinks: Sinks): Promise<void> {
  try {
    if (target.type === 'file') await writeSink(target, key, fileOptions(sinks));
    else await sinks.keyDelivery!.deliver(target, key);
  } catch (err) {
    if (err instanceof KeyDeliveryError) throw err;
    throw new KeyDeliveryError(`the key was not delivered to ${describeTarget(target)}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Sends the key, then records the delivery; the key is in no message. */
export async function deliver(client: ApiClient, action: PlanStep, target: SecretTarget, key: string, sinks: Sinks): Promise<Delivered> {
  try {
    await send(target, key, sinks);
  } catch (err) {
    return { error: `${action.kind}/${action.name}: ${(err as Error).message}; the next run rotates the key and delivers it again` };
  }
  try {
    await record(client, action);
  } catch (err) {
    return { error: `${action.kind}/${action.name}: the key reached ${describeTarget(target)} but recording that failed (${err instanceof Error ? err.message : String(err)}); the next run rotates it again, keeping this value working for the overlap` };
  }
  return { keySecret: action.keySecret! };
}

/** Records on the object that its current value reached action.keySecret. */
async function record(client: ApiClient, action: PlanStep): Promise<void> {
  await recordDelivery(client, action.plural, action.name, action.keySecret!);
}

/** Records on an object that its current value reached `sink` (key-delivered, replacing `pending:`). */
export async function recordDelivery(client: ApiClient, plural: PlanStep['plural'], name: string, sink: string): Promise<void> {
  await client.patch(plural, name, [{ op: 'add', path: deliveredPath, value: sink }]);
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * A scheduled rotation: rotate awaiting confirmation, deliver, confirm. Failures are results; the
 * previous value keeps working after any of them.
 */
export async function rotateAndDeliver(client: ApiClient, action: PlanStep, target: SecretTarget, sinks: Sinks): Promise<Delivered> {
  const id = `${action.kind}/${action.name}`;
  const planned = action.rotation!;
  let key: string | undefined;
  let made: KubeObject['metadata'] | undefined;
  try {
    // Named by an idempotency key and sent once more if no answer came: the server rotates at most
    // once, and a replay (no value in it) ends below as "no new value", the previous value working.
    const spec = { overlapSeconds: planned.overlapSeconds, awaitConfirmation: true, idempotencyKey: randomUUID() };
    const rotated = await client.rotate(action.name, spec).catch((err: unknown) => {
      if (err instanceof ClientError && !err.fromServer) return client.rotate(action.name, spec);
      throw err;
    });
    key = isJsonMap(rotated.spec) && typeof rotated.spec.key === 'string' ? rotated.spec.key : undefined;
    made = rotated.metadata;
  } catch (err) {
    return { error: `${id}: not rotated: the server refused the rotation: ${messageOf(err)}; the current value keeps working` };
  }
  if (!key) return { error: `${id}: rotated, but the server returned no new value (the answer to the first request was lost, and a value the server made is not shown twice); the previous value keeps working (the rotation awaits confirmation) and the next run rotates again` };
  try {
    await send(target, key, sinks);
  } catch (err) {
    return { error: `${id}: rotated, but ${messageOf(err)}; the previous value keeps working (the rotation awaits confirmation) and the next run rotates again and delivers` };
  }
  let confirmed;
  try {
    confirmed = await confirmOwn(client, action.name, made!);
  } catch (err) {
    return { error: `${id}: the new value reached ${describeTarget(target)} but confirming the rotation failed (${messageOf(err)}); the previous value keeps working and the next run rotates again` };
  }
  const status = isJsonMap(confirmed.status) && isJsonMap(confirmed.status.rotation) ? confirmed.status.rotation : {};
  const until = typeof status.previousValidUntil === 'string' ? status.previousValidUntil : undefined;
  // A key moved to a new sink: recorded only now, so a failure before this rotates again with the overlap.
  if (planned.reason === 'moved' || planned.reason === 'unrecorded') {
    try {
      await record(client, action);
    } catch (err) {
      return { error: `${id}: the new value reached ${describeTarget(target)} and the rotation was confirmed, but recording the delivery failed (${messageOf(err)}); the next run rotates again with the overlap` };
    }
  }
  return { keySecret: action.keySecret!, ...(until ? { previousValidUntil: until } : {}) };
}

/**
 * Confirms the rotation this run made, and no other: the confirmation names the resourceVersion
 * the rotation returned (409 once the key changed). The server's own record of the key's use is a
 * write too; so on a 409 the key is read again, and confirmed at its new version only if its
 * generation is still the rotation's (no value or spec change since, only status writes).
 */
export async function confirmOwn(client: ApiClient, name: string, made: KubeObject['metadata']): Promise<KubeObject> {
  try {
    return await client.rotate(name, { confirm: true }, made.resourceVersion ? { resourceVersion: made.resourceVersion } : {});
  } catch (err) {
    if (!(err instanceof ClientError && err.code === 409) || made.generation === undefined) throw err;
    const now = await client.get('ownedaccesskeys', name);
    if (!now?.metadata.resourceVersion || now.metadata.generation !== made.generation) {
      throw new Error('the key was rotated or changed by someone else since this rotation; not confirming a rotation this run did not make');
    }
    return client.rotate(name, { confirm: true }, { resourceVersion: now.metadata.resourceVersion });
  }
}
