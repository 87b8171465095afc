/**
 * The registry's rules about access key values, read together by every write of a key:
 * - a key-setting write is one after which whoever wrote it can use the key: it sets a value (a
 *   create, a rotation, a PUT or patch of spec.key) or enables a disabled key again (a value its
 *   writer may have read before it was disabled works once more). Admission judges such a write as
 *   making the key anew (escalation, the failure budget) and ties the key to the writer's sign-in,
 *   whatever the verb: isKeySetting is the one place that says which writes those are;
 * - two access keys may never share a value: authentication could not tell them apart;
 * - a key made by a request that authenticated with a Login key (or with a key tied to one) is
 *   tied to that Login key: an ownerReference the server sets, so that ending the sign-in ends the
 *   keys made with it. Logout or a re-login deletes the Login key and the garbage collector (which
 *   matches owners by uid) removes them; authentication refuses them as soon as the Login key is
 *   refused (src/auth/authenticate.ts), so a revocation at the provider reaches them within one
 *   refresh interval. Chains tie to the first Login key, never to the intermediate key.
 */
import { reEnables } from '../api/re-enable.js';
import { valueSetByAnnotation } from '../api/key-types.js';
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject, OwnerReference } from '../api/types.js';
import { keyOf, type RegistryContext, type SignInTie } from './context.js';
import { keyValueInUse, storeCall } from './storage-errors.js';
import { ownerReferencesOf } from '../api/owner-references.js';

/** Whether a write of `next` (over `old`) sets a key value its writer can use (see above). */
export function isKeySetting(old: KubeObject | undefined, next: KubeObject, revealedKey: string | undefined): boolean {
  if (next.kind !== 'OwnedAccessKey') return false;
  return revealedKey !== undefined || reEnables(old, next);
}

/** Refuses a key value another key holds (422 on spec.key, counted as a probe: storage-errors.ts). */
export async function assertKeyUnused(ctx: RegistryContext, stored: StoredApiObject, name: string): Promise<void> {
  const hash = stored.sealed?.keyHash;
  if (!hash) return;
  const holders = await storeCall(ctx, name, () => ctx.store.getByIndex<StoredApiObject>(ctx.prefix, hash));
  if (holders.some((h) => keyOf(ctx, h.metadata.name!) !== keyOf(ctx, name))) {
    throw keyValueInUse(ctx.gk, name);
  }
}

/** The reference a key tied to `tie` carries. */
export const signInReference = (apiVersion: string, tie: SignInTie): OwnerReference => ({ apiVersion, kind: 'OwnedAccessKey', name: tie.name, uid: tie.uid });

/**
 * Adds the tie to a key about to be written by a key-setting write (a create, a rotation, a PUT or
 * patch of spec.key, a re-enable), replacing a reference the client wrote to the same uid. A Login
 * key written with itself is not tied to itself.
 */
export function tieToSignIn(ctx: RegistryContext, stored: StoredApiObject, tie: SignInTie | undefined): void {
  if (!tie || ctx.model.info.kind !== 'OwnedAccessKey' || stored.metadata.uid === tie.uid) return;
  const others = ownerReferencesOf(stored.metadata).filter((r) => r.uid !== tie.uid);
  stored.metadata.ownerReferences = [...others, signInReference(ctx.model.info.apiVersion, tie)];
}

/**
 * Records who set a key's value, at every write of a key, as the server's own annotation: the
 * setter on a write that sets a new value (a create, a rotation, a PUT or patch of spec.key to
 * another value), else what the key had, whatever the client sent (a PUT from git without it keeps it,
 * an edit claiming another setter is dropped, as kube drops status from a main-resource write). A
 * write that names no setter (the server's own, a test's registry call) keeps what the key had.
 */
export function recordValueSetter(ctx: RegistryContext, stored: StoredApiObject, previous: StoredApiObject | undefined, setsKey: boolean, setter: string | undefined): void {
  if (ctx.model.info.kind !== 'OwnedAccessKey') return;
  const value = setsKey && setter !== undefined ? setter : previous?.metadata.annotations?.[valueSetByAnnotation];
  const { [valueSetByAnnotation]: _sent, ...others } = stored.metadata.annotations ?? {};
  if (value !== undefined) stored.metadata.annotations = { ...others, [valueSetByAnnotation]: value };
  else if (Object.keys(others).length > 0) stored.metadata.annotations = others;
  else delete stored.metadata.annotations;
}

/**
 * Whether a write gives a key another holder (spec.user, spec.team or spec.subject): the value
 * stays, but whoever moved it may know it, so the move records its writer as the setter (a key an
 * administrator set, moved to a user on call by someone holding its value, carried that user's
 * approvals to them: found by a review).
 */
export function holderMoved(old: { spec?: unknown }, next: { spec?: unknown }): boolean {
  const holder = (o: { spec?: unknown }) => {
    const spec = (o.spec ?? {}) as { user?: unknown; team?: unknown; subject?: unknown };
    return JSON.stringify([spec.user ?? null, spec.team ?? null, spec.subject ?? null]);
  };
  return holder(old) !== holder(next);
}
