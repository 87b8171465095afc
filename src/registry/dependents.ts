/**
 * The dependents of an owner: objects whose ownerReferences name it by apiVersion, kind, name and
 * uid, as the garbage collector matches them: a lookup in the owner index (indexes.ts), which the
 * watch cache keeps, so a delete costs its dependents, not a walk of every object.
 */
import { servedPlurals } from '../api/resources.js';
import type { KubeObject, OwnerReference } from '../api/types.js';
import type { Registry } from './registry.js';
import { ownerReferencesOf } from '../api/owner-references.js';

/** Whether `ref` names `owner` (an object of this API, `apiVersion`) as the collector reads it. */
export const namesOwner = (ref: OwnerReference, owner: KubeObject, apiVersion: string) =>
  ref.apiVersion === apiVersion && ref.kind === owner.kind && ref.name === owner.metadata.name && ref.uid === owner.metadata.uid;

export function dependentsFinder(registry: Registry) {
  return async (owner: KubeObject): Promise<KubeObject[]> => {
    const uid = owner.metadata.uid;
    const apiVersion = registry.teams.info.apiVersion;
    if (!uid) return [];
    const found: KubeObject[] = [];
    for (const r of servedPlurals.map((p) => registry.byPlural(p)!)) {
      for (const o of await r.byField('owner', uid)) {
        if (o.metadata.uid !== uid && ownerReferencesOf(o.metadata).some((ref) => namesOwner(ref, owner, apiVersion))) found.push(o);
      }
    }
    return found;
  };
}
