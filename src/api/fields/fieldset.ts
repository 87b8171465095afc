/**
 * Field sets as structured-merge-diff defines them, from an object and its schema. Inside, a set
 * is flat: each path is a JSON array of FieldsV1 keys (`f:spec`, `k:{"name":"x"}`, `v:"ana"`, `.`)
 * mapped to a fingerprint of the value there (field-path.ts parses one into its parts). FieldsV1
 * trees exist only at the edges.
 */
import { canonicalJson } from '../canonical-json.js';
import { kubePathString, parseFieldPath } from './field-path.js';
import { propertySchema, type StructuralSchema } from '../schema/load.js';
import { isJsonMap } from '../types.js';

/** Path (JSON array of FieldsV1 keys) -> fingerprint of the value at that path. */
export type Leaves = Map<string, string>;
export type FieldSet = Set<string>;

const marker = '';

function sortedKeys(obj: Record<string, unknown>, keys: string[]): string {
  return JSON.stringify(Object.fromEntries([...keys].sort().map((k) => [k, obj[k]])));
}


/** What a leaf's value is recorded as: its canonical JSON, or nothing when only the paths are wanted. */
type Fingerprint = (value: unknown) => string;
const noFingerprint: Fingerprint = () => marker;

function collect(schema: StructuralSchema | undefined, value: unknown, path: string[], out: Leaves, fingerprint: Fingerprint): void {
  // The path's JSON text without its closing bracket, built once: each of a list's or a map's
  // thousands of members then costs one concatenation, not a JSON.stringify of the whole path.
  const open = JSON.stringify(path).slice(0, -1);
  const at = (extra: string[]) => (extra.length === 0 ? `${open}]` : `${open}${path.length ? ',' : ''}${JSON.stringify(extra).slice(1)}`);
  if (Array.isArray(value)) {
    const listType = schema?.['x-kubernetes-list-type'];
    if (listType === 'set') {
      out.set(at(['.']), marker);
      for (const item of value) out.set(at([`v:${canonicalJson(item)}`]), marker);
      return;
    }
    if (listType === 'map') {
      const keys = schema?.['x-kubernetes-list-map-keys'] ?? [];
      out.set(at(['.']), marker);
      for (const item of value) {
        if (!isJsonMap(item)) continue;
        const element = `k:${sortedKeys(item, keys)}`;
        out.set(at([element, '.']), marker);
        collectFields(schema?.items, item, [...path, element], out, fingerprint);
      }
      return;
    }
    out.set(at([]), fingerprint(value)); // atomic: owned as a whole
    return;
  }
  if (isJsonMap(value) && schema && (schema.properties || typeof schema.additionalProperties === 'object')) {
    const before = out.size;
    if (!schema.properties) out.set(at(['.']), marker); // a granular map (labels): the map itself is a node
    collectFields(schema, value, path, out, fingerprint);
    if (out.size === before) out.set(at([]), fingerprint(value)); // an empty struct is set as a whole
    return;
  }
  out.set(at([]), fingerprint(value));
}

function collectFields(schema: StructuralSchema | undefined, obj: Record<string, unknown>, path: string[], out: Leaves, fingerprint: Fingerprint): void {
  for (const [key, child] of Object.entries(obj)) {
    if (child === undefined) continue;
    const childSchema = propertySchema(schema, key) ?? (typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    collect(childSchema, child, [...path, `f:${key}`], out, fingerprint);
  }
}

/** The metadata fields clients manage; the rest of metadata belongs to the server. */
const managedMetadata = ['labels', 'annotations', 'finalizers', 'ownerReferences'];

/** Every field an object sets (spec, status, and the client-managed metadata), with fingerprints. */
export function leavesOf(schema: StructuralSchema, obj: Record<string, unknown>): Leaves {
  return collectLeaves(schema, obj, canonicalJson);
}

/**
 * The same fields' paths alone. Where no value is compared (a create, whose every field is new;
 * a set of paths to keep or remove) the fingerprints, each a sorted copy of a value stringified,
 * are work for nothing: they were most of a create's field bookkeeping.
 */
export function leafPathsOf(schema: StructuralSchema, obj: Record<string, unknown>): FieldSet {
  return new Set(collectLeaves(schema, obj, noFingerprint).keys());
}

/** The fields of `obj` as leaves whose values are `fingerprint` of theirs. */
function collectLeaves(schema: StructuralSchema, obj: Record<string, unknown>, fingerprint: Fingerprint): Leaves {
  const out: Leaves = new Map();
  const meta = isJsonMap(obj.metadata) ? obj.metadata : {};
  const kept = Object.fromEntries(managedMetadata.filter((k) => meta[k] !== undefined).map((k) => [k, meta[k]]));
  const top: Record<string, unknown> = {};
  if (Object.keys(kept).length > 0) top.metadata = kept;
  for (const k of ['spec', 'status']) if (obj[k] !== undefined) top[k] = obj[k];
  collectFields(schema, top, [], out, fingerprint);
  return out;
}

export const pathsOf = (leaves: Leaves): FieldSet => new Set(leaves.keys());

export function union(a: FieldSet, b: FieldSet): FieldSet {
  return new Set([...a, ...b]);
}

export function difference(a: FieldSet, b: FieldSet): FieldSet {
  return new Set([...a].filter((p) => !b.has(p)));
}

export function intersection(a: FieldSet, b: FieldSet): FieldSet {
  return new Set([...a].filter((p) => b.has(p)));
}

/** Paths added or whose value changed from `old` to `next`. */
export function changedPaths(old: Leaves, next: Leaves): FieldSet {
  return new Set([...next].filter(([p, v]) => old.get(p) !== v).map(([p]) => p));
}

/** The container (JSON of its keys) whose own node `path` is: a map's or list's `.`, not a list item's. */
function containerOf(path: string): string | undefined {
  const keys = JSON.parse(path) as string[];
  if (keys.length < 2 || keys[keys.length - 1] !== '.') return undefined;
  const parent = keys[keys.length - 2]!;
  return parent.startsWith('k:') || parent.startsWith('v:') ? undefined : JSON.stringify(keys.slice(0, -1));
}

/** Every container that holds a path of `set` other than its own node. */
function holders(set: FieldSet): Set<string> {
  const out = new Set<string>();
  for (const p of set) {
    const keys = JSON.parse(p) as string[];
    const own = containerOf(p) !== undefined ? 1 : 0;
    for (let i = 1; i < keys.length - own; i++) out.add(JSON.stringify(keys.slice(0, i)));
  }
  return out;
}

/**
 * An Apply entry's set as structured-merge-diff writes it: a map or a list owns no node of its own,
 * only what it holds (a list item keeps its `.`). One applied empty keeps its node, as nothing else
 * would say it was applied.
 */
export function appliedForm(set: FieldSet): FieldSet {
  const held = holders(set);
  return new Set([...set].filter((p) => {
    const container = containerOf(p);
    return container === undefined || !held.has(container);
  }));
}

/** An Apply entry read back: with the node of each map or list of `present` it owns something in. */
export function withContainers(set: FieldSet, present: Iterable<string>): FieldSet {
  const held = holders(set);
  const out = new Set(set);
  for (const p of present) {
    const container = containerOf(p);
    if (container !== undefined && held.has(container)) out.add(p);
  }
  return out;
}

/** Whether `set` owns a path; a map's or list's node counts as owned by whoever owns something in it. */
export function owns(set: FieldSet): (path: string) => boolean {
  const held = holders(set);
  return (path) => {
    if (set.has(path)) return true;
    const container = containerOf(path);
    return container !== undefined && held.has(container);
  };
}

/** A FieldsV1 tree: `{"f:spec": {"f:users": {".": {}, "v:\"ana\"": {}}}}`. */
export function toFieldsV1(set: FieldSet): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of [...set].sort()) {
    let node = root;
    for (const key of JSON.parse(p) as string[]) {
      node[key] ??= {};
      node = node[key] as Record<string, unknown>;
    }
  }
  return root;
}

/** The paths of a FieldsV1 tree: every node without children, and every `.`. */
export function fromFieldsV1(tree: unknown, prefix: string[] = [], out: FieldSet = new Set()): FieldSet {
  if (!isJsonMap(tree)) return out;
  for (const [key, child] of Object.entries(tree)) {
    const path = [...prefix, key];
    if (isJsonMap(child) && Object.keys(child).length > 0) fromFieldsV1(child, path, out);
    else out.add(JSON.stringify(path));
  }
  return out;
}

/** kube's fieldpath.Path string of a member: `.spec.clusterRoles[name="admin"].name`, `.spec.users[="ana"]`. */
export const pathString = (member: string): string => kubePathString(parseFieldPath(member));
