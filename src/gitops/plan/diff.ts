/**
 * The comparison at the heart of planning. Fields written in git or owned by the gitops manager
 * count; fields other managers added that git does not mention are not drift, except where git's
 * value is the whole value: the fields that grant or define access (`x-teamkeys-authoritative` in
 * the schemas), and under `sync-strategy: replace` all of spec, labels and annotations. Ignored
 * fields and everything the server owns never count. The target is the live object with git's
 * fields laid over it and what git does not hold removed, so a write touches nothing else.
 */
import fastJsonPatch from 'fast-json-patch';
import { isDeepStrictEqual } from 'node:util';
import type { AuditEvent } from '../../api/audit-event.js';
import { fromFieldsV1, leavesOf, type FieldSet, type Leaves } from '../../api/fields/fieldset.js';
import { mergeApplied, removePath } from '../../api/fields/merge.js';
import type { ResourceModel } from '../../api/model.js';
import { isJsonMap, type KubeObject, type ManagedFieldsEntry } from '../../api/types.js';
import { gitopsManager } from '../../client/types.js';
import { ownerOf, removedBy, withPerson, type Attribution } from './attribution.js';

export type { Attribution } from './attribution.js';

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
}

export interface DiffOptions {
  ignore: (dotted: string) => boolean;
  /** `sync-strategy: replace`: spec, labels and annotations become exactly git's. */
  replace: boolean;
  /** The object's audit events, when the server's trail could be read. */
  history?: AuditEvent[];
}

const isStatus = (path: string) => path.startsWith('["f:status"');

/** `["f:spec","f:users","v:\"a\""]` -> `["spec","users"]`: the field, up to the first list item. */
function fieldOf(path: string): string[] {
  const parts: string[] = [];
  for (const key of JSON.parse(path) as string[]) {
    if (!key.startsWith('f:')) break;
    parts.push(key.slice(2));
  }
  return parts;
}

const reportPath = (path: string) => fieldOf(path).join('.');

function valueAt(obj: unknown, parts: string[]): unknown {
  let node = obj;
  for (const part of parts) node = isJsonMap(node) ? node[part] : undefined;
  return node;
}

/** Whether a FieldsV1 path lies at or under a field path (`["spec","users"]`). */
function under(path: string, field: string[]): boolean {
  const keys = JSON.parse(path) as string[];
  return field.every((f, i) => keys[i] === `f:${f}`);
}

/** The fields whose whole value git decides under `sync-strategy: replace`. */
const replaced = [['spec'], ['metadata', 'labels'], ['metadata', 'annotations']];

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

const byLength = (a: string, b: string) => a.length - b.length;

/** What another writer did to a field, told from git's value (target) and the live one. */
function describe(path: string, live: unknown, target: unknown): string {
  // Backticks delimit the values, so none may appear inside one (reports split on them).
  const show = (v: unknown) => `\`${JSON.stringify(v).replace(/`/g, '\\u0060')}\``;
  if (Array.isArray(live) || Array.isArray(target)) {
    const l = Array.isArray(live) ? live : [];
    const t = Array.isArray(target) ? target : [];
    const added = l.filter((x) => !t.some((y) => isDeepStrictEqual(x, y)));
    const removed = t.filter((x) => !l.some((y) => isDeepStrictEqual(x, y)));
    const parts = [added.length ? `added ${added.map(show).join(', ')} to ${path}` : '', removed.length ? `removed ${removed.map(show).join(', ')} from ${path}` : ''];
    const text = parts.filter(Boolean).join(' and ');
    if (text) return text;
  }
  if (live === undefined) return `removed ${path}`;
  if (target === undefined) return `added ${path}`;
  return `changed ${path}`;
}

/** The write that makes live equal to git where git decides, and each field change with who made it. */
export function diffObject(model: ResourceModel, desired: KubeObject, live: KubeObject, opts: DiffOptions): Diff {
  const { schema } = model;
  const entries = live.metadata.managedFields ?? [];
  const counts = (p: string) => !isStatus(p) && !opts.ignore(reportPath(p));
  const desiredCore = coreOf(desired);
  // Ignored fields keep their live values: drop them from what git asks for.
  for (const p of [...leavesOf(schema, desiredCore).keys()].filter((p) => !counts(p)).sort(byLength)) {
    removePath(schema, desiredCore, JSON.parse(p) as string[]);
  }
  const wanted = new Set([...leavesOf(schema, desiredCore).keys()]);
  const mine = ownedBy(entries, (m) => m === gitopsManager);
  const others = ownedBy(entries, (m) => m !== gitopsManager);
  const liveCore = coreOf(live);
  // A copy: the removals below must not reach into the live object through shared structs.
  const targetCore = mergeApplied(schema, structuredClone(liveCore), desiredCore) as Record<string, unknown>;
  // What gitops wrote before and git no longer has goes, unless another manager holds it too.
  for (const p of [...mine].filter((p) => counts(p) && !wanted.has(p) && !others.has(p)).sort(byLength)) {
    removePath(schema, targetCore, JSON.parse(p) as string[]);
  }
  // Where git's value is the whole value, whatever else is live goes, whoever added it.
  const whole = opts.replace ? replaced : model.authoritativePaths;
  const extra = [...leavesOf(schema, targetCore).keys()].filter((p) => counts(p) && !wanted.has(p) && whole.some((f) => under(p, f)));
  for (const p of extra.sort(byLength)) removePath(schema, targetCore, JSON.parse(p) as string[]);
  // A field git does not hold at all goes whole (not as an empty struct).
  for (const f of whole.filter((f) => valueAt(desiredCore, f) === undefined && !opts.ignore(f.join('.')))) {
    const parent = valueAt(targetCore, f.slice(0, -1));
    if (isJsonMap(parent)) delete parent[f[f.length - 1]!];
  }

  const patch = fastJsonPatch.compare(liveCore, targetCore);
  const before: Leaves = leavesOf(schema, liveCore);
  const after: Leaves = leavesOf(schema, targetCore);
  const differs = [...new Set([...before.keys(), ...after.keys()])].filter((p) => counts(p) && before.get(p) !== after.get(p));
  // A container (a map's marker, a struct left empty) is reported through what changed in it.
  const inside = (p: string) => (p.endsWith('"."]') ? p.slice(0, -'"."]'.length) : `${p.slice(0, -1)},`);
  const changed = differs.filter((p) => !differs.some((q) => q !== p && q.startsWith(inside(p))));
  const byField = new Map<string, string[]>();
  for (const p of changed) {
    const key = JSON.stringify(fieldOf(p));
    byField.set(key, [...(byField.get(key) ?? []), p]);
  }
  const changes: FieldChange[] = [...byField.entries()]
    .map(([key, leaves]) => {
      const parts = JSON.parse(key) as string[];
      const path = parts.join('.');
      // Live content that changes or goes: whoever last wrote it. Content git wants that is not
      // live: someone removed it since gitops applied it, or git added it.
      const liveLeaves = leaves.filter((p) => before.has(p));
      const missing = leaves.filter((p) => !before.has(p));
      let by = ownerOf(entries, liveLeaves);
      let drift = by !== undefined && by.manager !== gitopsManager;
      if (!drift && missing.length > 0) {
        const remover = removedBy(missing, entries, opts.history);
        if (remover) [by, drift] = [remover, true];
      }
      if (drift && by && !by.user) by = withPerson(by, liveLeaves, opts.history);
      const b = valueAt(liveCore, parts);
      const a = valueAt(targetCore, parts);
      const change: FieldChange = { path, drift };
      if (b !== undefined) change.before = b;
      if (a !== undefined) change.after = a;
      if (by) change.lastChangedBy = by;
      if (drift) change.description = describe(path, b, a);
      return change;
    })
    .sort((x, y) => x.path.localeCompare(y.path));
  const target = { ...live, metadata: { ...live.metadata, ...(targetCore.metadata as object) }, spec: targetCore.spec } as KubeObject;
  for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    if ((targetCore.metadata as Record<string, unknown>)[k] === undefined) delete (target.metadata as Record<string, unknown>)[k];
  }
  return { target, patch, changes };
}
