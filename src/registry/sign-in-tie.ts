/**
 * A key made by a request that authenticated with a Login key (or with a key tied to one) is tied
 * to that Login key: an ownerReference the server sets, so that ending the sign-in ends the keys
 * made with it. Logout or a re-login deletes the Login key and the garbage collector (which
 * matches owners by uid) removes them; authentication refuses them as soon as the Login key is
 * refused (src/auth/authenticate.ts), so a revocation at the provider reaches them within one
 * refresh interval. Chains tie to the first Login key, never to the intermediate key.
 */
import type { StoredApiObject } from '../api/secrets.js';
import type { OwnerReference } from '../api/types.js';
import type { RegistryContext } from './context.js';

/** The Login key a request's key is, or is tied to. */
export interface SignInTie {
  name: string;
  uid: string;
}

/** The reference a key tied to `tie` carries. */
export const signInReference = (apiVersion: string, tie: SignInTie): OwnerReference => ({ apiVersion, kind: 'OwnedAccessKey', name: tie.name, uid: tie.uid });

/**
 * Adds the tie to a key about to be written by a key-setting write (key-setting.ts: a create, a
 * rotation, a PUT or patch of spec.key, a re-enable), replacing a reference the client wrote to the
 * same uid. A Login key written with itself is not tied to itself.
 */
export function tieToSignIn(ctx: RegistryContext, stored: StoredApiObject, tie: SignInTie | undefined): void {
  if (!tie || ctx.model.info.kind !== 'OwnedAccessKey' || stored.metadata.uid === tie.uid) return;
  const others = (stored.metadata.ownerReferences ?? []).filter((r) => r.uid !== tie.uid);
  stored.metadata.ownerReferences = [...others, signInReference(ctx.model.info.apiVersion, tie)];
}
