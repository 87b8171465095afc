/**
 * What a delete takes with it: an owner reference is checked when it is written, not when it acts,
 * so a caller who tied an object to one of their own and then lost `delete` on it could still
 * remove it by deleting the owner. A delete that lets the garbage collector remove dependents
 * (Background or Foreground; Orphan keeps them) is therefore refused unless the caller may delete
 * every object that would go with it, transitively. The exception is the server-set binding of a
 * team key to its Team (team-binding.ts): deleting a team takes its keys, that is the point of it,
 * and it does so under Orphan too (docs/auth.md), so what those keys own is checked under any policy.
 */
import { pluralOfKind } from '../api/resources.js';
import type { KubeObject } from '../api/types.js';
import { allows, authorizeObject } from '../auth/decision.js';
import type { Resource } from '../auth/roles.js';
import { teamOf } from '../registry/team-binding.js';
import { mayDelete, type OwnerAdmission } from './owner-admission.js';
import { ownerReferencesOf } from '../api/owner-references.js';

/** The collector's own rule (garbage-collector.ts boundTo): a team's keys always go with it. */
const boundTo = (d: KubeObject, owner: KubeObject) => d.kind === 'OwnedAccessKey' && owner.kind === 'Team' && teamOf(d) === owner.metadata.name;

/**
 * Whether a live owner outside `going` keeps `d`. Fail closed: a reference to another API's object,
 * or to an owner being deleted itself, keeps nothing here.
 */
async function keptByAnother(a: OwnerAdmission, d: KubeObject, going: Set<string>): Promise<boolean> {
  for (const ref of ownerReferencesOf(d.metadata)) {
    if (going.has(ref.uid) || ref.apiVersion !== `${a.authorizer.group}/v1` || !pluralOfKind(ref.kind)) continue;
    const owner = await a.lookup(ref.kind, ref.name);
    if (owner?.metadata.uid === ref.uid && !owner.metadata.deletionTimestamp) return true;
  }
  return false;
}

/**
 * Why deleting `owner` (of `resource`) would collect something the caller may not delete (a 403
 * reason naming a dependent only if the caller may read it), or undefined.
 */
export async function cascadeDenial(a: OwnerAdmission, resource: Resource, owner: KubeObject, orphan: boolean): Promise<string | undefined> {
  const going = new Set([owner.metadata.uid!]);
  const queue = [owner];
  for (let o = queue.shift(); o; o = queue.shift()) {
    for (const d of await a.dependents(o)) {
      const uid = d.metadata.uid!;
      if (going.has(uid)) continue;
      const bound = boundTo(d, o);
      // Orphan keeps the owner's own dependents, all but a team's keys.
      if (orphan && o === owner && !bound) continue;
      if (!bound && (await keptByAnother(a, d, going))) continue;
      going.add(uid);
      queue.push(d); // what d owns goes with it in the next sweep
      const plural = pluralOfKind(d.kind) as Resource | undefined;
      if (bound || (plural && mayDelete(a, plural, d))) continue;
      const why = `deleting ${resource} "${owner.metadata.name}" would garbage-collect objects you may not delete`;
      // Named only to a caller who could read it, its scope aside (the denial is about the delete).
      const readable = plural && allows(authorizeObject(a.authorizer, { user: a.who, verb: 'get', resource: plural, object: d }));
      return readable ? `${why} (${plural} "${d.metadata.name}")` : why;
    }
  }
  return undefined;
}
