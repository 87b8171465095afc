/**
 * The objects a plan leaves live, beside the live ones: the two worlds the plan's access change
 * compares. Each action is looked up by name once (a Map), so a plan of 10,000 writes does not
 * search the live list 10,000 times.
 */
import { applyJsonPatch } from '../../api/patch.js';
import type { KubeObject } from '../../api/types.js';
import type { Plural } from '../../client/types.js';
import type { Plan } from './plan.js';

/** What an action leaves of one object: the object, or undefined when it deletes it. */
export interface PlannedObject {
  before: KubeObject | undefined;
  after: KubeObject | undefined;
  created: boolean;
}

/** The objects each writing action changes (create, update, replace, delete), by plural and name. */
export function plannedObjects(plan: Plan, live: Partial<Record<Plural, KubeObject[]>>): Record<Plural, Map<string, PlannedObject>> {
  const out = { teams: new Map(), ownedaccesskeys: new Map(), federatedcredentials: new Map() } as Record<Plural, Map<string, PlannedObject>>;
  // A refused plan writes nothing: nobody's access changes.
  const writes = plan.actions.filter((a) => a.type === 'create' || a.type === 'update' || a.type === 'replace' || a.type === 'delete');
  if (plan.refused || writes.length === 0) return out;
  const byName = new Map<Plural, Map<string, KubeObject>>();
  const liveOf = (plural: Plural) => {
    let m = byName.get(plural);
    if (!m) byName.set(plural, (m = new Map((live[plural] ?? []).map((o) => [o.metadata.name!, o]))));
    return m;
  };
  for (const a of writes) {
    // A kind the caller gave no live objects of is not asked about (the access change reads Teams and keys).
    if (!live[a.plural]) continue;
    const before = liveOf(a.plural).get(a.name);
    if (a.type === 'create' || a.type === 'replace') out[a.plural].set(a.name, { before, after: a.body, created: a.type === 'create' });
    else if (a.type === 'update') out[a.plural].set(a.name, { before, after: applyJsonPatch(before, a.patch ?? []) as KubeObject, created: false });
    else if (a.type === 'delete') out[a.plural].set(a.name, { before, after: undefined, created: false });
  }
  return out;
}
