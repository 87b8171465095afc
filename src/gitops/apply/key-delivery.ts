/**
 * Keys that go to a secret (annotation gitops.management.service/key-secret): after the server
 * made a key (create) or the reconciler rotated one, the key is delivered, and only then is the
 * delivery recorded on the object (annotation key-delivered = the target). A failed delivery
 * leaves the object unrecorded, so the next run's plan rotates the key and delivers it again.
 */
import { generateKey } from '../../api/secrets.js';
import type { ApiClient } from '../../client/types.js';
import { describeTarget, KeyDeliveryError, parseSecretTarget, type KeyDelivery, type SecretTarget } from '../keys/github-secrets.js';
import { annotations } from '../plan/annotations.js';
import type { Action } from '../plan/plan.js';

/** What a delivery did, for the change-set entry. */
export type Delivered = { keySecret: string } | { error: string };

/** A JSON pointer segment: `/` and `~` escaped. */
const pointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** The target of an action, or why the key cannot go there (before anything is written). */
export function deliveryTarget(action: Action, delivery: KeyDelivery | undefined): SecretTarget | { error: string } {
  const target = parseSecretTarget(action.keySecret!);
  if (typeof target === 'string') return { error: `${action.kind}/${action.name}: ${annotations.keySecret} ${target}` };
  if (!delivery) {
    const what = action.type === 'create' ? 'not created' : 'not rotated';
    return { error: `${action.kind}/${action.name}: its key goes to ${describeTarget(target)} but GITHUB_TOKEN is not set: ${what} (set GITHUB_TOKEN to a token that may write the repository's secrets)` };
  }
  return target;
}

/** The patch that rotates a key: the planned one plus a new key, which it returns alongside. */
export function rotation(action: Action): { patch: unknown[]; key: string } {
  const key = generateKey();
  return { patch: [...(action.patch ?? []), { op: 'add', path: '/spec/key', value: key }], key };
}

/** Sends the key, then records the delivery; the key is in no message. */
export async function deliver(client: ApiClient, action: Action, target: SecretTarget, key: string, delivery: KeyDelivery): Promise<Delivered> {
  try {
    await delivery.deliver(target, key);
  } catch (err) {
    const why = err instanceof KeyDeliveryError ? err.message : `the key was not delivered to ${describeTarget(target)}: ${err instanceof Error ? err.message : String(err)}`;
    return { error: `${action.kind}/${action.name}: ${why}; the next run rotates the key and delivers it again` };
  }
  const path = `/metadata/annotations/${pointer(annotations.keyDelivered)}`;
  try {
    await client.patch(action.plural, action.name, [{ op: 'add', path, value: action.keySecret }]);
  } catch (err) {
    return { error: `${action.kind}/${action.name}: the key reached ${describeTarget(target)} but recording that failed (${err instanceof Error ? err.message : String(err)}); the next run rotates it again` };
  }
  return { keySecret: action.keySecret! };
}
