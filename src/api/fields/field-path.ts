/**
 * A field path as structured-merge-diff writes it in FieldsV1: a field (`f:spec`), a map-list item
 * by its key fields (`k:{"name":"admin"}`), a set item by its value (`v:"ana"`), a list item by
 * position (`i:3`), and `.`, the container itself (a map or list that also has members). Field
 * sets keep each path as the JSON array of those keys (a string a Set can hold); this is the same
 * path with its parts told apart, for code that has to look inside one.
 */

export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  /** The item's key fields as the JSON FieldsV1 holds (`{"name":"admin"}`), kept as written so a path round-trips. */
  | { readonly kind: 'key'; readonly json: string }
  /** The item's value as the JSON FieldsV1 holds (`"ana"`). */
  | { readonly kind: 'value'; readonly json: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'self' };

export type FieldPath = readonly PathElement[];

const self: PathElement = { kind: 'self' };

/** One FieldsV1 key (`f:spec`, `k:{...}`, `v:...`, `i:0`, `.`) as a path element. */
export function parseElement(key: string): PathElement {
  if (key === '.') return self;
  const body = key.slice(2);
  switch (key.slice(0, 2)) {
    case 'f:':
      return { kind: 'field', name: body };
    case 'k:':
      return { kind: 'key', json: body };
    case 'v:':
      return { kind: 'value', json: body };
    case 'i:':
      if (/^(0|[1-9]\d*)$/.test(body)) return { kind: 'index', index: Number(body) };
  }
  // The server writes every FieldsV1 key it stores, so another form is a bug, not input to tolerate.
  throw new Error(`not a FieldsV1 key: ${JSON.stringify(key)}`);
}

/** The FieldsV1 key of one element. */
export function formatElement(e: PathElement): string {
  switch (e.kind) {
    case 'field':
      return `f:${e.name}`;
    case 'key':
      return `k:${e.json}`;
    case 'value':
      return `v:${e.json}`;
    case 'index':
      return `i:${e.index}`;
    case 'self':
      return '.';
  }
}

/** A path from a field set's member (`["f:spec","f:users","v:\"ana\""]`). */
export function parseFieldPath(member: string): FieldPath {
  return (JSON.parse(member) as string[]).map(parseElement);
}

/** The field set member of a path: the inverse of parseFieldPath. */
export function fieldSetMember(path: FieldPath): string {
  return JSON.stringify(path.map(formatElement));
}

/** A path of fields only, from their names: `fieldPath('spec', 'users')`. */
export function fieldPath(...names: string[]): FieldPath {
  return names.map((name) => ({ kind: 'field', name }));
}

export function sameElement(a: PathElement, b: PathElement): boolean {
  switch (a.kind) {
    case 'field':
      return b.kind === 'field' && a.name === b.name;
    case 'key':
    case 'value':
      return b.kind === a.kind && a.json === b.json;
    case 'index':
      return b.kind === 'index' && a.index === b.index;
    case 'self':
      return b.kind === 'self';
  }
}

/** Whether `path` is `prefix` or lies under it. */
export function hasPrefix(path: FieldPath, prefix: FieldPath): boolean {
  return prefix.length <= path.length && prefix.every((e, i) => sameElement(e, path[i]!));
}

export function samePath(a: FieldPath, b: FieldPath): boolean {
  return a.length === b.length && hasPrefix(a, b);
}

/** The path without its `.`: a container's `.` stands for the container, so members lie under this. */
const container = (path: FieldPath): FieldPath => (path.at(-1)?.kind === 'self' ? path.slice(0, -1) : path);

/** Whether `path` lies strictly inside `outer` (a member of the map, list or struct `outer` names). */
export function isInside(path: FieldPath, outer: FieldPath): boolean {
  const c = container(outer);
  return path.length > c.length && !samePath(path, outer) && hasPrefix(path, c);
}

/**
 * The paths no other of them lies inside: what changed, rather than the containers around it.
 * Counted by prefix, not pair by pair: a replaced list of thousands of users is thousands of paths.
 */
export function innermost(paths /* distinct */: readonly FieldPath[]): FieldPath[] {
  const below = new Map<string, number>(); // member of a proper prefix -> how many paths lie under it
  for (const p of paths) {
    for (let n = 0; n < p.length; n++) {
      const k = fieldSetMember(p.slice(0, n));
      below.set(k, (below.get(k) ?? 0) + 1);
    }
  }
  // A container's `.` path lies under the container too: itself, not one inside it.
  return paths.filter((p) => {
    const c = container(p);
    return (below.get(fieldSetMember(c)) ?? 0) <= (c.length < p.length ? 1 : 0);
  });
}

/** The field names a path starts with, up to its first list item or `.`: the field as a user names it. */
export function fieldNames(path: FieldPath): string[] {
  const names: string[] = [];
  for (const e of path) {
    if (e.kind !== 'field') break;
    names.push(e.name);
  }
  return names;
}

/** The path as reports write a field: `spec.users`, `metadata.labels.app.kubernetes.io/name`. */
export const dottedPath = (path: FieldPath): string => fieldNames(path).join('.');

/** kube's fieldpath.Path string: `.spec.clusterRoles[name="admin"].name`, `.spec.users[="ana"]`. */
export function kubePathString(path: FieldPath): string {
  let s = '';
  for (const e of path) {
    if (e.kind === 'field') s += `.${e.name}`;
    else if (e.kind === 'value') s += `[=${e.json}]`;
    else if (e.kind === 'index') s += `[${e.index}]`;
    else if (e.kind === 'key') {
      const fields = JSON.parse(e.json) as Record<string, unknown>;
      s += `[${Object.entries(fields).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
    }
  }
  return s;
}
