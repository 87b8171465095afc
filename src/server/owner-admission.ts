/**
 * What a write reaches through the garbage collector, checked before it is stored. An owner
 * reference makes an object go when its owners go, and a finalizer or blockOwnerDeletion holds a
 * deletion back, so (kube's OwnerReferencesPermissionEnforcement, made to match by uid as the
 * collector does):
 * - changing metadata.ownerReferences, or adding a finalizer, needs `delete` on the object written
 *   (on create too: a teams-creator that could not delete the team it makes may not arrange its
 *   deletion by a later write either); so does removing a finalizer the collector works through
 *   (`orphan`, `foregroundDeletion`): that changes what a deletion does to the dependents (without
 *   `orphan` they are deleted, without `foregroundDeletion` the owner goes before those blocking it);
 * - every reference the write adds or changes must name a live object of this API by kind, name
 *   and uid (422 otherwise): the collector matches owners by uid, so a reference whose uid is
 *   another object's would tie this object to that one;
 * - setting blockOwnerDeletion needs `delete` on the owner, the object that uid names (422, as the
 *   API document says).
 * A key's reference to its own team is the server's (team-binding.ts), not the client's change; so is the
 * tie of a key made with a Login key (registry/keys.ts), which only an accesskeys-admin may remove.
 */
import { isDeepStrictEqual } from 'node:util';
import { invalid, type ApiError } from '../api/errors.js';
import type { FieldError } from '../api/field-errors.js';
import { kindOfPlural, pluralOfKind } from '../api/resources.js';
import type { KubeObject, OwnerReference } from '../api/types.js';
import type { Authorizer } from '../auth/authorize.js';
import { allows, authorize } from '../auth/decision.js';
import type { Identity } from '../auth/identity.js';
import { isLoginKey } from '../auth/login-keys.js';
import { isFederatedKey } from '../api/key-types.js';
import { isAdminFor, type Resource } from '../auth/roles.js';
import { gcFinalizers } from '../registry/delete.js';
import { ownerReferencesOf } from '../api/owner-references.js';

export interface OwnerAdmission {
  who: Identity;
  resource: Resource;
  authorizer: Authorizer;
  /** Reads an object of this API by kind and name, if it exists. */
  lookup(kind: string, name: string): Promise<KubeObject | undefined>;
  /** The objects whose ownerReferences name an owner (registry/dependents.ts). */
  dependents(owner: KubeObject): Promise<KubeObject[]>;
}

const refsOf = (o: KubeObject | undefined): OwnerReference[] => ownerReferencesOf(o?.metadata);

/** Whether a reference is the server-set binding of an access key (or a FederatedCredential) to its team. */
function isTeamBinding(resource: Resource, obj: KubeObject, ref: OwnerReference): boolean {
  const team = (obj.spec as { team?: unknown } | undefined)?.team;
  return resource !== 'teams' && ref.kind === 'Team' && typeof team === 'string' && ref.name === team;
}

/** The tie the server sets on a key made with the caller's Login key (registry/keys.ts), if the caller signed in. */
export function signInTieOf(a: OwnerAdmission): OwnerReference | undefined {
  const tie = a.who.signIn;
  return tie && { apiVersion: `${a.authorizer.group}/v1`, kind: 'OwnedAccessKey', name: tie.name, uid: tie.uid };
}

/** Whether a reference is that tie. */
const isSignInTie = (a: OwnerAdmission, ref: OwnerReference) => {
  const tie = a.resource === 'ownedaccesskeys' ? signInTieOf(a) : undefined;
  return tie !== undefined && sameReference(ref, tie);
};

/**
 * Whether two references name one owner in every part that decides what it is: a reference kept
 * with the same uid and name under another apiVersion or kind names nothing this API serves, so
 * authentication and the collector ignore it (a tie respelled so is a tie cut).
 */
export const sameReference = (x: OwnerReference, y: OwnerReference) => x.uid === y.uid && x.name === y.name && x.kind === y.kind && x.apiVersion === y.apiVersion;

/** The references the client controls, in order (on a key-setting write, the server's tie is not the client's). */
const clientRefs = (a: OwnerAdmission, obj: KubeObject | undefined, serverTied = false) =>
  refsOf(obj).filter((r) => !obj || !(isTeamBinding(a.resource, obj, r) || (serverTied && isSignInTie(a, r))));

/** Whether `who` may delete `obj` (its scope included). */
export function mayDelete(a: OwnerAdmission, resource: Resource, obj: KubeObject): boolean {
  const name = obj.metadata.name;
  return allows(authorize(a.authorizer, { user: a.who, verb: 'delete', resource, ...(name ? { name } : {}), object: obj }));
}

/**
 * Why the write may not change what it changes of ownerReferences and finalizers (a 403 reason),
 * or undefined. `target` is the object delete is judged on: the new one on create, else the old.
 * `keySetting`: the server tied the key to the writer's sign-in (registry/keys.ts), which
 * is not the client's change.
 */
export function ownershipDenial(a: OwnerAdmission, old: KubeObject | undefined, object: KubeObject, target: KubeObject, keySetting = false): string | undefined {
  const tied = keySetting || !old;
  const refsChanged = !isDeepStrictEqual(clientRefs(a, old, tied), clientRefs(a, object, tied));
  const had = new Set(old?.metadata.finalizers ?? []);
  const addsFinalizer = (object.metadata.finalizers ?? []).some((f) => !had.has(f));
  const removesGc = Object.values(gcFinalizers).find((f) => had.has(f) && !(object.metadata.finalizers ?? []).includes(f));
  if (!refsChanged && !addsFinalizer && !removesGc) return undefined;
  if (mayDelete(a, a.resource, target)) return undefined;
  if (refsChanged) return 'changing metadata.ownerReferences requires permission to delete this object';
  return addsFinalizer ? 'adding a finalizer requires permission to delete this object' : `removing the ${removesGc} finalizer requires permission to delete this object`;
}

/** The checks by uid: every new reference names a live owner, and blocking one needs delete on it. */
export async function ownerReferenceErrors(a: OwnerAdmission, old: KubeObject | undefined, object: KubeObject): Promise<FieldError[]> {
  const apiVersion = `${a.authorizer.group}/v1`;
  const errs: FieldError[] = [];
  for (const [i, ref] of refsOf(object).entries()) {
    const unchanged = refsOf(old).some((r) => isDeepStrictEqual(r, ref));
    const binding = isTeamBinding(a.resource, object, ref);
    const blocks = ref.blockOwnerDeletion === true && !refsOf(old).some((r) => r.uid === ref.uid && r.blockOwnerDeletion === true);
    if ((unchanged || binding) && !blocks) continue;
    const resource = ref.apiVersion === apiVersion ? pluralOfKind(ref.kind) : undefined;
    // A reference to another API's object: the collector never matches it, so it can neither
    // collect nor block anything here; only blocking through it is refused, as it cannot be checked.
    const owner = resource ? await a.lookup(ref.kind, ref.name) : undefined;
    // One answer whether the owner is missing or has another uid: only a caller who already knows
    // the uid learns that it is live.
    if (resource && owner?.metadata.uid !== ref.uid) {
      errs.push({ type: 'Invalid', field: `metadata.ownerReferences[${i}].uid`, value: ref.uid, detail: `must be the uid of the existing ${ref.kind} "${ref.name}"` });
      continue;
    }
    if (!blocks) continue;
    if (resource && owner && mayDelete(a, resource, owner)) continue;
    errs.push({
      type: 'Forbidden',
      field: `metadata.ownerReferences[${i}].blockOwnerDeletion`,
      detail: `setting blockOwnerDeletion requires permission to delete the owner ${ref.kind} "${ref.name}"`,
    });
  }
  return errs;
}

/**
 * Why the write may not drop a key's reference to a Login key or a key the token exchange minted
 * (or to a key that no longer exists, which may have been one), or undefined: that reference ends the key with the sign-in it was made
 * with, and only an accesskeys-admin may cut it (a 403 reason).
 */
export async function signInTieDenial(a: OwnerAdmission, old: KubeObject | undefined, object: KubeObject): Promise<string | undefined> {
  if (a.resource !== 'ownedaccesskeys' || !old || isAdminFor(a.who.clusterRoles, a.resource)) return undefined;
  const apiVersion = `${a.authorizer.group}/v1`;
  for (const ref of refsOf(old)) {
    if (ref.apiVersion !== apiVersion || ref.kind !== 'OwnedAccessKey' || refsOf(object).some((r) => sameReference(r, ref))) continue;
    const owner = await a.lookup(ref.kind, ref.name);
    if (owner?.metadata.uid !== ref.uid || isLoginKey(owner)) return 'removing the reference to the Login key this key was made with requires the accesskeys-admin role';
    // A key the token exchange minted ties what it makes as a sign-in does: a job that cut the tie
    // kept its keys past the rule's narrowing and the minted key's revocation (found by a review).
    if (isFederatedKey(owner)) return 'removing the reference to the key the token exchange minted, which this key was made with, requires the accesskeys-admin role';
  }
  return undefined;
}

/** ownerReferenceErrors as one 422, or undefined when there are none. */
export async function ownerReferenceErrorStatus(a: OwnerAdmission, old: KubeObject | undefined, object: KubeObject): Promise<ApiError | undefined> {
  const errs = await ownerReferenceErrors(a, old, object);
  return errs.length > 0 ? invalid({ group: a.authorizer.group, kind: kindOfPlural(a.resource) }, object.metadata.name ?? '', errs) : undefined;
}
