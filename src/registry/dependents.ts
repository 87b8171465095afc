/**
 * The dependents of an owner: objects whose ownerReferences name it by apiVersion, kind, name and
 * uid, as the garbage collector matches them. There is no index by owner uid; the collector scans,
 * and so does this, over the watch cache's in-memory objects (CachedStore.scan) with a substring
 * prefilter on the uid, so only objects that mention it are decoded.
 */
import { servedPlurals } from '../api/resources.js';
import type { KubeObject, OwnerReference } from '../api/types.js';
import type { Registry } from './registry.js';
import { mentions } from './mentions.js';

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
      for await (const o of r.scan(mentions(uid))) {
        if (o.metadata.uid !== uid && (o.metadata.ownerReferences ?? []).some((ref) => namesOwner(ref, owner, apiVersion))) found.push(o);
      }
    }
    return found;
  };
}
