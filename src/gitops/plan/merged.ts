/**
 * What each planned action leaves live, beside what is live now: the two sides of `teamkeys
 * diff`, as kubectl diff compares LIVE with MERGED. Server bookkeeping (managedFields) is left
 * out of both, as kubectl diff leaves it out by default.
 */
import { applyJsonPatch } from '../../api/patch.js';
import type { KubeObject } from '../../api/types.js';
import type { Plural } from '../../client/types.js';
import type { Plan } from './plan.js';

export interface ObjectDiff {
  kind: string;
  name: string;
  /** The object now, or undefined when the action creates it. */
  live?: KubeObject;
  /** The object after the action, or undefined when the action deletes it. */
  merged?: KubeObject;
  /** What the action does that no field shows: a key rotated and delivered to its secret (the key is never in a plan). */
  note?: string;
}

function shown(obj: KubeObject | undefined): KubeObject | undefined {
  if (!obj) return undefined;
  const copy = structuredClone(obj);
  delete copy.metadata.managedFields;
  return copy;
}

/** Both sides of every action that writes (create, update, replace, delete), in the plan's order. */
export function mergedObjects(plan: Plan, live: Record<Plural, KubeObject[]>): ObjectDiff[] {
  const out: ObjectDiff[] = [];
  for (const a of plan.actions) {
    const now = live[a.plural].find((o) => o.metadata.name === a.name);
    let merged: KubeObject | undefined;
    if (a.type === 'create' || a.type === 'replace') merged = a.body;
    else if (a.type === 'update') merged = applyJsonPatch(now, a.patch ?? []) as KubeObject;
    else if (a.type !== 'delete') continue;
    const before = shown(now);
    const after = shown(merged);
    const note = a.rotateKey ? `apply rotates its key and delivers the new one to ${a.keySecret}` : undefined;
    out.push({ kind: a.kind, name: a.name, ...(before ? { live: before } : {}), ...(after ? { merged: after } : {}), ...(note ? { note } : {}) });
  }
  return out;
}
