/**
 * The comparison at the heart of planning. Fields written in git or owned by the gitops manager
 * count; fields other managers added that git does not mention are not drift, except where git's
 * value is the whole value: the fields that grant or define access (`x-teamkeys-authoritative` in
 * the schemas), and under `sync-strategy: replace` all of spec, labels and annotations. Ignored
 * fields and everything the server owns never count. The target is the live object with git's
 * fields laid over it and what git does not hold removed, so a write touches nothing else.
 */
import fastJsonPatch from 'fast-json-patch';
import type { AuditEvent } from '../../api/audit-event.js';
import { dottedPath, fieldNames, fieldPath, fieldSetMember, hasPrefix, innermost, parseFieldPath, type FieldPath } from '../../api/fields/field-path.js';
import { fromFieldsV1, leafPathsOf, leavesOf, owns, type FieldSet, type Leaves } from '../../api/fields/fieldset.js';
import { mergeApplied, removePath } from '../../api/fields/merge.js';
import type { ResourceModel } from '../../api/model.js';
import { isJsonMap, type KubeObject, type ManagedFieldsEntry } from '../../api/types.js';
import { gitopsManager } from '../../client/types.js';
import { attributeFields, type Attribution, type FieldEvidence } from './attribution.js';

export type { Attribution, FieldEvidence } from './attribution.js';

export interface FieldChange {
  /** Where, as a user writes it: `spec.users`, `metadata.labels.team`. */
  path: string;
  before?: unknown;
  after?: unknown;
  /** Who last wrote the live value (managedFields), and the person behind it (audit trail). */
  lastChangedBy?: Attribution;
  /** The live value was set, or git's removed, by someone other than gitops: drift rather than a change in git. */
  drift: boolean;
  /** For drift: what the other writer did, e.g. `added "mallory" to spec.users`. */
  description?: string;
  /** Pull-request mode: the live value is not shown, as the manifest does not name this field (see withheld.ts). */
  withheld?: true;
}

export interface Diff {
  target: KubeObject;
  patch: unknown[];
  changes: FieldChange[];
  /** What the changes were attributed from: attributed again, without a second diff, once the audit trail is read. */
  fields: FieldEvidence[];
}

export interface DiffOptions {
  ignore: (dotted: string) => boolean;
  /** `sync-strategy: replace`: spec, labels and annotations become exactly git's. */
  replace: boolean;
  /** The object's audit events, when the server's trail could be read. */
  history?: AuditEvent[];
}

const isStatus = (path: FieldPath) => path[0]?.kind === 'field' && path[0].name === 'status';

function valueAt(obj: unknown, names: string[]): unknown {
  let node = obj;
  for (const name of names) node = isJsonMap(node) ? node[name] : undefined;
  return node;
}

/** The fields whose whole value git decides under `sync-strategy: replace`. */
const replaced = [fieldPath('spec'), fieldPath('metadata', 'labels'), fieldPath('metadata', 'annotations')];

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

/** Containers before what they hold: removing a container first leaves nothing inside to find. */
const shortestFirst = (a: FieldPath, b: FieldPath) => a.length - b.length;

/** The write that makes live equal to git where git decides, and each field change with who made it. */
export function diffObject(model: ResourceModel, desired: KubeObject, live: KubeObject, opts: DiffOptions): Diff {
  const { schema } = model;
  const entries = live.metadata.managedFields ?? [];
  // Field sets hold each path as a string (a Set can); each is parsed once, here.
  const parsed = new Map<string, FieldPath>();
  const pathOf = (member: string): FieldPath => {
    let path = parsed.get(member);
    if (!path) parsed.set(member, (path = parseFieldPath(member)));
    return path;
  };
  const counts = (p: string) => !isStatus(pathOf(p)) && !opts.ignore(dottedPath(pathOf(p)));
  const remove = (obj: Record<string, unknown>, members: string[]) => {
    for (const path of members.map(pathOf).sort(shortestFirst)) removePath(schema, obj, path);
  };
  const desiredCore = coreOf(desired);
  // Ignored fields keep their live values: drop them from what git asks for.
  remove(desiredCore, [...leafPathsOf(schema, desiredCore)].filter((p) => !counts(p)));
  const wanted = leafPathsOf(schema, desiredCore);
  const mine = ownedBy(entries, (m) => m === gitopsManager);
  // Another manager holds a map or list when it holds something in it (an Apply entry names no node of its own).
  const others = owns(ownedBy(entries, (m) => m !== gitopsManager));
  const liveCore = coreOf(live);
  // A copy: the removals below must not reach into the live object through shared structs.
  const targetCore = mergeApplied(schema, structuredClone(liveCore), desiredCore) as Record<string, unknown>;
  // What gitops wrote before and git no longer has goes, unless another manager holds it too.
  remove(targetCore, [...mine].filter((p) => counts(p) && !wanted.has(p) && !others(p)));
  // Where git's value is the whole value, whatever else is live goes, whoever added it.
  const whole = opts.replace ? replaced : model.authoritativePaths.map((names) => fieldPath(...names));
  remove(targetCore, [...leafPathsOf(schema, targetCore)].filter((p) => counts(p) && !wanted.has(p) && whole.some((f) => hasPrefix(pathOf(p), f))));
  // A field git does not hold at all goes whole (not as an empty struct).
  for (const f of whole.filter((f) => valueAt(desiredCore, fieldNames(f)) === undefined && !opts.ignore(dottedPath(f)))) {
    const names = fieldNames(f);
    const parent = valueAt(targetCore, names.slice(0, -1));
    if (isJsonMap(parent)) delete parent[names[names.length - 1]!];
  }

  const patch = fastJsonPatch.compare(liveCore, targetCore);
  const before: Leaves = leavesOf(schema, liveCore);
  const after: Leaves = leavesOf(schema, targetCore);
  const differs = [...new Set([...before.keys(), ...after.keys()])].filter((p) => counts(p) && before.get(p) !== after.get(p));
  // A container (a map's marker, a struct left empty) is reported through what changed in it.
  const changed = new Set(innermost(differs.map(pathOf))); // the very paths pathOf gave
  // Leaves grouped by the field a user names (a list's items by their list), keyed by that field's member.
  const byField = new Map<string, { names: string[]; leaves: string[] }>();
  for (const p of differs.filter((p) => changed.has(pathOf(p)))) {
    const names = fieldNames(pathOf(p));
    const key = fieldSetMember(fieldPath(...names));
    const group = byField.get(key) ?? { names, leaves: [] };
    group.leaves.push(p);
    byField.set(key, group);
  }
  const fields: FieldEvidence[] = [...byField.values()]
    .map(({ names: parts, leaves }) => {
      const b = valueAt(liveCore, parts);
      const a = valueAt(targetCore, parts);
      // Live content that changes or goes, and content git wants that is not live: what attribution reads.
      const field: FieldEvidence = { path: parts.join('.'), liveLeaves: leaves.filter((p) => before.has(p)), missing: leaves.filter((p) => !before.has(p)) };
      if (b !== undefined) field.before = b;
      if (a !== undefined) field.after = a;
      return field;
    })
    .sort((x, y) => x.path.localeCompare(y.path));
  const changes = attributeFields(fields, entries, opts.history);
  const target = { ...live, metadata: { ...live.metadata, ...(targetCore.metadata as object) }, spec: targetCore.spec } as KubeObject;
  for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    if ((targetCore.metadata as Record<string, unknown>)[k] === undefined) delete (target.metadata as Record<string, unknown>)[k];
  }
  return { target, patch, changes, fields };
}
