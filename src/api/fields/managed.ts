/**
 * managedFields bookkeeping, as kube-apiserver records it: per (manager, operation, subresource)
 * entries whose field sets follow who set what, and the conflicts server-side apply reports.
 */
import type { StructuralSchema } from '../schema/load.js';
import type { ManagedFieldsEntry } from '../types.js';
import {
  appliedForm,
  changedPaths,
  difference,
  fromFieldsV1,
  intersection,
  leafPathsOf,
  leavesOf,
  pathsOf,
  toFieldsV1,
  union,
  type FieldSet,
  withContainers,
} from './fieldset.js';
import { parseFieldPath } from './field-path.js';
import { removePath } from './merge.js';

export type Operation = 'Update' | 'Apply';

export interface Manager {
  name: string;
  operation: Operation;
  subresource?: string;
}

export interface Conflict {
  manager: ManagedFieldsEntry;
  path: string;
}

/** Beyond this many Update entries, the oldest fold into one named ancient-changes. */
export const maxUpdateManagers = 10;

interface Entry {
  meta: ManagedFieldsEntry;
  set: FieldSet;
  /** The set's size as stored; undefined for an entry whose set may have grown (the writer's, ancient-changes). */
  storedSize?: number;
}

const same = (e: ManagedFieldsEntry, m: Manager) =>
  e.manager === m.name && e.operation === m.operation && (e.subresource ?? '') === (m.subresource ?? '');

function decode(entries: ManagedFieldsEntry[] | undefined): Entry[] {
  return (entries ?? []).map((meta) => {
    const set = fromFieldsV1(meta.fieldsV1);
    return { meta, set, storedSize: set.size };
  });
}

/**
 * The entries as stored. Another manager's set only ever shrinks in a write (fields taken or gone),
 * so one of its stored size is the set stored: its fieldsV1 is kept as it was rather than encoded
 * again (a small write to a key with 2.9 MB of managedFields spent a sixth of its 200 ms encoding
 * sets nobody changed; docs/performance.md).
 */
function encode(entries: Entry[]): ManagedFieldsEntry[] {
  return entries
    .filter((e) => e.set.size > 0)
    .map((e) => {
      const { fieldsV1: stored, ...rest } = e.meta;
      if (e.storedSize === e.set.size && e.meta.fieldsType === 'FieldsV1' && stored !== undefined) return { ...rest, fieldsType: 'FieldsV1', fieldsV1: stored };
      return { ...rest, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(e.meta.operation === 'Apply' ? appliedForm(e.set) : e.set) };
    });
}

/** The writer's entry, made when it has none; its set may grow, so it is encoded again. */
function entryFor(entries: Entry[], m: Manager, apiVersion: string, time: string): Entry {
  let entry = entries.find((e) => same(e.meta, m));
  if (!entry) {
    const meta: ManagedFieldsEntry = { manager: m.name, operation: m.operation, apiVersion, time };
    if (m.subresource) meta.subresource = m.subresource;
    entry = { meta, set: new Set() };
    entries.push(entry);
  }
  delete entry.storedSize;
  return entry;
}

function foldAncient(entries: Entry[], apiVersion: string): Entry[] {
  const updates = entries.filter((e) => e.meta.operation === 'Update' && e.meta.manager !== 'ancient-changes');
  if (updates.length <= maxUpdateManagers) return entries;
  const oldest = [...updates].sort((a, b) => (a.meta.time ?? '').localeCompare(b.meta.time ?? '')).slice(0, updates.length - maxUpdateManagers + 1);
  const ancient = entries.find((e) => e.meta.manager === 'ancient-changes') ?? {
    meta: { manager: 'ancient-changes', operation: 'Update' as const, apiVersion },
    set: new Set<string>(),
  };
  for (const e of oldest) ancient.set = union(ancient.set, e.set);
  delete ancient.storedSize;
  ancient.meta.time = oldest.map((e) => e.meta.time ?? '').sort().at(-1);
  return [...entries.filter((e) => !oldest.includes(e) && e !== ancient), ancient];
}

/**
 * An Update (POST, PUT, JSON or merge patch) by `manager`: it gains every field it added or
 * changed, other managers lose those, and fields gone from the object leave every set. Its time
 * moves only when it changed something.
 */
export function recordUpdate(
  schema: StructuralSchema,
  old: Record<string, unknown> | undefined,
  next: Record<string, unknown>,
  previous: ManagedFieldsEntry[] | undefined,
  manager: Manager,
  apiVersion: string,
  time: string,
): ManagedFieldsEntry[] {
  let present: FieldSet;
  let changed: FieldSet;
  if (old) {
    const after = leavesOf(schema, next);
    present = pathsOf(after);
    changed = changedPaths(leavesOf(schema, old), after);
  } else changed = present = leafPathsOf(schema, next); // a create: every field is new, no value to compare
  const entries = decode(previous);
  for (const e of entries) e.set = intersection(difference(e.set, changed), present);
  if (changed.size > 0) {
    const mine = entryFor(entries, manager, apiVersion, time);
    mine.set = union(mine.set, changed);
    mine.meta.time = time;
  }
  return encode(foldAncient(entries, apiVersion));
}

/** `...k:{"name":"x"}, f:name`: a key field of a map-list item, which lives and dies with the item. */
function isItemKey(path: string): boolean {
  const keys = JSON.parse(path) as string[];
  const parent = keys[keys.length - 2];
  const leaf = keys[keys.length - 1]!;
  return parent?.startsWith('k:') === true && leaf.startsWith('f:') && leaf.slice(2) in (JSON.parse(parent.slice(2)) as object);
}

export interface ApplyResult {
  /** The merged object with fields the applier dropped (and nobody else owns) removed. */
  object: Record<string, unknown>;
  managedFields: ManagedFieldsEntry[];
  conflicts: Conflict[];
}

/**
 * Server-side apply by `manager`: it owns exactly the applied fields. A field another manager
 * owns whose value the configuration changes is a conflict unless forced (then it is taken).
 */
export function recordApply(
  schema: StructuralSchema,
  live: Record<string, unknown>,
  config: Record<string, unknown>,
  merged: Record<string, unknown>,
  previous: ManagedFieldsEntry[] | undefined,
  manager: Manager,
  force: boolean,
  apiVersion: string,
  time: string,
): ApplyResult {
  const liveLeaves = leavesOf(schema, live);
  const applied = leavesOf(schema, config);
  const appliedSet = pathsOf(applied);
  const entries = decode(previous);
  const others = entries.filter((e) => e.meta.manager !== manager.name);

  const conflicts: Conflict[] = [];
  for (const [path, value] of applied) {
    const current = liveLeaves.get(path);
    if (current === undefined || current === value) continue;
    for (const e of others) if (e.set.has(path)) conflicts.push({ manager: e.meta, path });
  }
  if (conflicts.length > 0 && !force) return { object: live, managedFields: previous ?? [], conflicts };
  const taken = new Set(conflicts.map((c) => c.path));
  for (const e of others) e.set = difference(e.set, taken);

  // What the applier applied before and not now goes, unless someone else still owns it.
  const mine = entryFor(entries, manager, apiVersion, time);
  // Stored without the nodes of maps and lists (appliedForm): what was applied before holds them again.
  mine.set = withContainers(mine.set, liveLeaves.keys());
  const dropped = difference(mine.set, appliedSet);
  // A leaf is kept if another manager owns it; a container (a `.` path) if another owns anything in it.
  const ownedElsewhere = (path: string) => {
    const keys = JSON.parse(path) as string[];
    if (keys[keys.length - 1] !== '.') return others.some((e) => e.set.has(path));
    const container = JSON.stringify(keys.slice(0, -1)).slice(0, -1);
    return others.some((e) => [...e.set].some((p) => p.startsWith(`${container},`)));
  };
  const object = structuredClone(merged);
  // Containers first: a list item goes whole, and a key field never goes on its own.
  for (const path of [...dropped].sort((a, b) => a.length - b.length)) {
    if (isItemKey(path) || ownedElsewhere(path)) continue;
    removePath(schema, object, parseFieldPath(path));
  }
  const changedByMe = changedPaths(liveLeaves, applied).size > 0 || dropped.size > 0 || mine.set.size === 0;
  mine.set = appliedSet;
  if (changedByMe) mine.meta.time = time;
  const present = leafPathsOf(schema, object);
  for (const e of entries) e.set = intersection(e.set, present);
  return { object, managedFields: encode(foldAncient(entries, apiVersion)), conflicts: [] };
}
