/** Walkers over a structural schema: unknown-field pruning, list semantics, write-only and authoritative paths. */
import { joinPath, type FieldError } from '../field-errors.js';
import { propertySchema, type StructuralSchema } from './load.js';

type JsonMap = Record<string, unknown>;

const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Kube renders a map key as `[key]` and a plain property as `.key`. */
function childPath(path: string, key: string, inMap: boolean): string {
  return inMap ? `${path}[${key}]` : joinPath(path, key);
}

/**
 * Removes every field the schema does not declare, in place, and returns their paths, as
 * kube-apiserver prunes custom resources. Values of the wrong type are left for validation.
 */
export function pruneUnknownFields(schema: StructuralSchema, value: unknown, path = ''): string[] {
  const unknown: string[] = [];
  if (isMap(value)) {
    const additional = schema.additionalProperties;
    if (additional === true) return unknown;
    for (const key of Object.keys(value)) {
      const known = propertySchema(schema, key);
      if (known) unknown.push(...pruneUnknownFields(known, value[key], joinPath(path, key)));
      else if (typeof additional === 'object') {
        unknown.push(...pruneUnknownFields(additional, value[key], childPath(path, key, true)));
      } else if (schema.properties) {
        delete value[key];
        unknown.push(joinPath(path, key));
      }
    }
  } else if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => unknown.push(...pruneUnknownFields(schema.items!, item, joinPath(path, i))));
  }
  return unknown;
}

/**
 * Lists longer than their schema's maxItems, found before anything compares or merges their
 * items (server-side apply's merge, field sets): those costs grow with the list, the bound does not.
 */
export function listLengthErrors(schema: StructuralSchema, value: unknown, path = ''): FieldError[] {
  const errs: FieldError[] = [];
  if (isMap(value)) {
    for (const [key, child] of Object.entries(value)) {
      // A scalar holds no list: no path to build for each of a map's thousands of labels.
      if (child === null || typeof child !== 'object') continue;
      const known = propertySchema(schema, key) ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (known) errs.push(...listLengthErrors(known, child, known === schema.additionalProperties ? childPath(path, key, true) : joinPath(path, key)));
    }
  } else if (Array.isArray(value)) {
    const max = schema.maxItems;
    if (typeof max === 'number' && value.length > max) errs.push({ type: 'TooMany', field: path, value: value.length, detail: `must have at most ${max} items` });
    else if (schema.items) value.forEach((item, i) => errs.push(...listLengthErrors(schema.items!, item, joinPath(path, i))));
  }
  return errs;
}

/** Checks `x-kubernetes-list-type` set and map lists for duplicates, as kube's list validation does. */
export function checkListTypes(schema: StructuralSchema, value: unknown, path = ''): FieldError[] {
  const errs: FieldError[] = [];
  if (isMap(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (child === null || typeof child !== 'object') continue; // a scalar holds no list
      const known = propertySchema(schema, key);
      if (known) errs.push(...checkListTypes(known, child, joinPath(path, key)));
      else if (typeof schema.additionalProperties === 'object') {
        errs.push(...checkListTypes(schema.additionalProperties, child, childPath(path, key, true)));
      }
    }
  } else if (Array.isArray(value) && schema.items) {
    const listType = schema['x-kubernetes-list-type'];
    const mapKeys = schema['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    value.forEach((item, i) => {
      const itemPath = joinPath(path, i);
      let identity: unknown;
      if (listType === 'set' && (typeof item !== 'object' || item === null)) identity = item;
      else if (listType === 'map' && isMap(item) && mapKeys.every((k) => item[k] !== undefined)) {
        identity = Object.fromEntries(mapKeys.map((k) => [k, item[k]]));
      }
      if (identity !== undefined) {
        const id = JSON.stringify(identity);
        if (seen.has(id)) errs.push({ type: 'Duplicate', field: itemPath, value: identity });
        seen.add(id);
      }
      errs.push(...checkListTypes(schema.items!, item, itemPath));
    });
  }
  return errs;
}

/** Paths (through objects only) of every field marked writeOnly: the secrets the API never returns. */
export function writeOnlyPaths(schema: StructuralSchema, prefix: string[] = []): string[][] {
  const paths: string[][] = [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const path = [...prefix, key];
    if (child.writeOnly) paths.push(path);
    else paths.push(...writeOnlyPaths(child, path));
  }
  return paths;
}

/** Paths (through objects only) of every field marked `x-teamkeys-authoritative`: who has access. */
export function authoritativePaths(schema: StructuralSchema, prefix: string[] = []): string[][] {
  const paths: string[][] = [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const path = [...prefix, key];
    if (child['x-teamkeys-authoritative'] === true) paths.push(path);
    else paths.push(...authoritativePaths(child, path));
  }
  return paths;
}
