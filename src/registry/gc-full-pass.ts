/**
 * What the garbage collector's full pass (garbage-collector.ts) holds: of every object with an
 * owner or being deleted, only those its decisions read, so a pass over a million team keys of live
 * Teams holds the few it acts on, not all of them.
 *
 * One scan, one object at a time, keeps the objects being deleted and those with an owner gone.
 * Then the owner index adds the dependents of every object kept, and theirs in turn: an object
 * kept may be removed by the pass (a dependent deleted, an owner released), and collect() looks at
 * the owners of what it holds after its own writes, so such a dependent may go in the same pass.
 * Every other object's owners all live and none of them is kept, so collect() would read it and
 * leave it alone; and no decision about another object reads it (a second owner is read by
 * exists(), and only one being deleted by its object). The same decisions, in the same order:
 * collect() acts in the order a scan reads (kind, then name), so the kept objects are put back in it.
 */
import type { KubeObject, OwnerReference } from '../api/types.js';
import { mentions } from './mentions.js';
import type { ResourceRegistry } from './resource-registry.js';
import { ownerReferencesOf } from '../api/owner-references.js';

/**
 * `ownerGone(refs)`: whether the references are all to kinds served and one names an object gone.
 * Undefined once `stopped()`: a pass over a million team keys takes seconds, and a collector
 * stopping (the lease lost, the server closing) does not wait for the rest of it.
 */
export async function actionable(kinds: ResourceRegistry[], ownerGone: (refs: OwnerReference[]) => Promise<boolean>, stopped: () => boolean = () => false): Promise<KubeObject[] | undefined> {
  const kept = new Map<string, KubeObject>();
  // The scan parses only objects whose JSON mentions either: a read of the store, not a decode of every object.
  for (const r of kinds) {
    for await (const o of r.scan(mentions('ownerReferences', 'deletionTimestamp'))) {
      if (stopped()) return undefined;
      const refs = ownerReferencesOf(o.metadata);
      if (o.metadata.deletionTimestamp || (refs.length > 0 && (await ownerGone(refs)))) kept.set(o.metadata.uid!, o);
    }
  }
  const unvisited = [...kept.keys()];
  for (let uid = unvisited.pop(); uid !== undefined; uid = unvisited.pop()) {
    if (stopped()) return undefined;
    for (const r of kinds) {
      for (const o of await r.byField('owner', uid)) {
        if (kept.has(o.metadata.uid!)) continue;
        kept.set(o.metadata.uid!, o);
        unvisited.push(o.metadata.uid!);
      }
    }
  }
  if (stopped()) return undefined;
  const rank = new Map<string, number>(kinds.map((r, i) => [r.info.kind, i]));
  const order = (o: KubeObject) => [rank.get(o.kind) ?? kinds.length, o.metadata.name!] as const;
  return [...kept.values()].sort((a, b) => {
    const [ka, na] = order(a);
    const [kb, nb] = order(b);
    return ka - kb || (na < nb ? -1 : na > nb ? 1 : 0);
  });
}
