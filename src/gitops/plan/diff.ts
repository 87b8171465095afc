/**
 * The comparison at the heart of planning. Only fields written in git or owned by the gitops
 * manager count; fields other managers own and git does not mention are not drift; ignored
 * fields and everything the server owns never count. The target is the live object with git's
 * fields laid over it and gitops' dropped fields removed, so a write touches nothing else.
 */
import fastJsonPatch from 'fast-json-patch';
import { fromFieldsV1, leavesOf, type FieldSet, type Leaves } from '../../api/fields/fieldset.js';
import { mergeApplied, removePath } from '../../api/fields/merge.js';
import type { StructuralSchema } from '../../api/schema/load.js';
import { isJsonMap, type KubeObject, type ManagedFieldsEntry } from '../../api/types.js';
import { gitopsManager } from '../../client/types.js';

export interface Attribution {
  manager: string;
  operation: string;
  time?: string;
}

export interface FieldChange {
  /** Where, as a user writes it: `spec.users`, `metadata.labels.team`. */
  path: string;
  before?: unknown;
  after?: unknown;
  /** Who last wrote the live value, from managedFields. */
  lastChangedBy?: Attribution;
  /** The live value was set by someone other than gitops: drift rather than a change in git. */
  drift: boolean;
}

export interface Diff {
  target: KubeObject;
  patch: unknown[];
  changes: FieldChange[];
}

const isStatus = (path: string) => path.startsWith('["f:status"');

/** `["f:spec","f:users","v:\"a\""]` -> `spec.users`: up to the first list item. */
function reportPath(path: string): string {
  const parts: string[] = [];
  for (const key of JSON.parse(path) as string[]) {
    if (!key.startsWith('f:')) break;
    parts.push(key.slice(2));
  }
  return parts.join('.');
}

function valueAt(obj: unknown, dotted: string): unknown {
  let node = obj;
  for (const part of dotted.split('.')) node = isJsonMap(node) ? node[part] : undefined;
  return node;
}

/** The object's managed content: client metadata and spec (what a write can change). */
export function coreOf(obj: KubeObject): Record<string, unknown> {
  const m = obj.metadata as Record<string, unknown>;
  const metadata = Object.fromEntries(['labels', 'annotations', 'finalizers', 'ownerReferences'].filter((k) => m[k] !== undefined).map((k) => [k, m[k]]));
  return { metadata, ...(obj.spec !== undefined ? { spec: obj.spec } : {}) };
}

function ownedBy(entries: ManagedFieldsEntry[], manager: (m: string) => boolean): FieldSet {
  const set: FieldSet = new Set();
  for (const e of entries) if (manager(e.manager ?? '')) for (const p of fromFieldsV1(e.fieldsV1)) set.add(p);
  return set;
}

function attribute(entries: ManagedFieldsEntry[], paths: string[]): Attribution | undefined {
  const owners = entries.filter((e) => paths.some((p) => fromFieldsV1(e.fieldsV1).has(p)));
  const latest = owners.sort((a, b) => (b.time ?? '').localeCompare(a.time ?? ''))[0];
  if (!latest) return undefined;
  return { manager: latest.manager ?? '', operation: latest.operation ?? '', ...(latest.time ? { time: latest.time } : {}) };
}

export function diffObject(schema: StructuralSchema, desired: KubeObject, live: KubeObject, ignore: (dotted: string) => boolean): Diff {
  const entries = live.metadata.managedFields ?? [];
  const counts = (p: string) => !isStatus(p) && !ignore(reportPath(p));
  const desiredCore = coreOf(desired);
  // Ignored fields keep their live values: drop them from what git asks for.
  for (const p of [...leavesOf(schema, desiredCore)].map(([p]) => p).filter((p) => !counts(p)).sort((a, b) => a.length - b.length)) {
    removePath(schema, desiredCore, JSON.parse(p) as string[]);
  }
  const wanted = new Set([...leavesOf(schema, desiredCore).keys()]);
  const mine = ownedBy(entries, (m) => m === gitopsManager);
  const others = ownedBy(entries, (m) => m !== gitopsManager);
  const liveCore = coreOf(live);
  const targetCore = mergeApplied(schema, liveCore, desiredCore) as Record<string, unknown>;
  // What gitops wrote before and git no longer has goes, unless another manager holds it too.
  for (const p of [...mine].filter((p) => counts(p) && !wanted.has(p) && !others.has(p)).sort((a, b) => a.length - b.length)) {
    removePath(schema, targetCore, JSON.parse(p) as string[]);
  }
  const patch = fastJsonPatch.compare(liveCore, targetCore);
  const before: Leaves = leavesOf(schema, liveCore);
  const after: Leaves = leavesOf(schema, targetCore);
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter((p) => counts(p) && before.get(p) !== after.get(p));
  const byField = new Map<string, string[]>();
  for (const p of changed) byField.set(reportPath(p), [...(byField.get(reportPath(p)) ?? []), p]);
  const changes: FieldChange[] = [...byField.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([path, leaves]) => {
      const by = attribute(entries, leaves);
      const change: FieldChange = { path, drift: by !== undefined && by.manager !== gitopsManager };
      const b = valueAt(liveCore, path);
      const a = valueAt(targetCore, path);
      if (b !== undefined) change.before = b;
      if (a !== undefined) change.after = a;
      if (by) change.lastChangedBy = by;
      return change;
    });
  const target = { ...live, metadata: { ...live.metadata, ...(targetCore.metadata as object) }, spec: targetCore.spec } as KubeObject;
  for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    if ((targetCore.metadata as Record<string, unknown>)[k] === undefined) delete (target.metadata as Record<string, unknown>)[k];
  }
  return { target, patch, changes };
}
