/**
 * The API writes that take a key's value to its sink, in the order keys/key-delivery.ts decides:
 * a value made (by the create, a patch or the rotation subresource), sent, then confirmed and
 * recorded. Every failure is a result naming the key and the sink, never the value.
 */
import type { KubeObject } from '../../api/types.js';
import { ClientError, type ApiClient, type Plural } from '../../client/types.js';
import { describeTarget, type SecretTarget } from '../keys/github-secrets.js';
import { deliveryRecord, mayConfirmAgain, messageOf, newKeyPatch, previousValidUntil, recordsAfterConfirm, rotatedValue, rotationRequest, sendKey, type Delivered, type Sinks } from '../keys/key-delivery.js';
import type { PlanStep } from '../plan/plan.js';

/** Records on an object that its current value reached `sink`. */
export async function recordDelivery(client: ApiClient, plural: Plural, name: string, sink: string): Promise<void> {
  await client.patch(plural, name, deliveryRecord(sink));
}

/** Sends a value the server or this run made, then records the delivery. */
export async function deliverAndRecord(client: ApiClient, action: PlanStep, target: SecretTarget, key: string, sinks: Sinks): Promise<Delivered> {
  try {
    await sendKey(target, key, sinks);
  } catch (err) {
    return { error: `${action.kind}/${action.name}: ${messageOf(err)}; the next run rotates the key and delivers it again` };
  }
  try {
    await recordDelivery(client, action.plural, action.name, action.keySecret!);
  } catch (err) {
    return { error: `${action.kind}/${action.name}: the key reached ${describeTarget(target)} but recording that failed (${messageOf(err)}); the next run rotates it again, keeping this value working for the overlap` };
  }
  return { keySecret: action.keySecret! };
}

/** A key never delivered anywhere: git's patch and a new value in one write (guarded by the plan's resourceVersion), then delivered. */
export async function setAndDeliver(client: ApiClient, action: PlanStep, target: SecretTarget, sinks: Sinks): Promise<Delivered> {
  const { patch, key } = newKeyPatch(action);
  await client.patch(action.plural, action.name, patch);
  return deliverAndRecord(client, action, target, key, sinks);
}

/**
 * A scheduled rotation: rotate awaiting confirmation, deliver, confirm (and record a moved key).
 * Failures are results; the previous value keeps working after any of them.
 */
export async function rotateAndDeliver(client: ApiClient, action: PlanStep, target: SecretTarget, sinks: Sinks): Promise<Delivered> {
  const id = `${action.kind}/${action.name}`;
  let key: string | undefined;
  let made: KubeObject['metadata'];
  try {
    // Sent once more if no answer came: the idempotency key makes the server rotate at most once,
    // and a replay (no value in it) ends below as "no new value", the previous value working.
    const request = rotationRequest(action);
    const rotated = await client.rotate(action.name, request).catch((err: unknown) => {
      if (err instanceof ClientError && !err.fromServer) return client.rotate(action.name, request);
      throw err;
    });
    key = rotatedValue(rotated);
    made = rotated.metadata;
  } catch (err) {
    return { error: `${id}: not rotated: the server refused the rotation: ${messageOf(err)}; the current value keeps working` };
  }
  if (!key) return { error: `${id}: rotated, but the server returned no new value (the answer to the first request was lost, and a value the server made is not shown twice); the previous value keeps working (the rotation awaits confirmation) and the next run rotates again` };
  try {
    await sendKey(target, key, sinks);
  } catch (err) {
    return { error: `${id}: rotated, but ${messageOf(err)}; the previous value keeps working (the rotation awaits confirmation) and the next run rotates again and delivers` };
  }
  let until;
  try {
    until = previousValidUntil(await confirmOwn(client, action.name, made));
  } catch (err) {
    return { error: `${id}: the new value reached ${describeTarget(target)} but confirming the rotation failed (${messageOf(err)}); the previous value keeps working and the next run rotates again` };
  }
  if (recordsAfterConfirm(action)) {
    try {
      await recordDelivery(client, action.plural, action.name, action.keySecret!);
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
 * generation is still the rotation's (keys/key-delivery.ts mayConfirmAgain).
 */
export async function confirmOwn(client: ApiClient, name: string, made: KubeObject['metadata']): Promise<KubeObject> {
  try {
    return await client.rotate(name, { confirm: true }, made.resourceVersion ? { resourceVersion: made.resourceVersion } : {});
  } catch (err) {
    if (!(err instanceof ClientError && err.code === 409) || made.generation === undefined) throw err;
    const now = await client.get('ownedaccesskeys', name);
    if (!mayConfirmAgain(made, now)) throw new Error('the key was rotated or changed by someone else since this rotation; not confirming a rotation this run did not make');
    return client.rotate(name, { confirm: true }, { resourceVersion: now.metadata.resourceVersion! });
  }
}
