/**
 * Server-side apply's merge: the applied configuration laid over the live object by the schema's
 * list semantics, and the removal of fields an applier stopped applying that nobody else owns.
 */
import { isDeepStrictEqual } from 'node:util';
import { canonicalJson } from '../canonical-json.js';
import { propertySchema, type StructuralSchema } from '../schema/load.js';
import { isJsonMap, setField } from '../types.js';
import type { FieldPath } from './field-path.js';

function childSchema(schema: StructuralSchema | undefined, key: string): StructuralSchema | undefined {
  return propertySchema(schema, key) ?? (typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined);
}

const sameKeys = (a: unknown, b: unknown, keys: string[]) =>
  isJsonMap(a) && isJsonMap(b) && keys.every((k) => isDeepStrictEqual(a[k], b[k]));

/** Lays `config` over `live`: structs and maps merge by field, sets by value, map lists by key. */
export function mergeApplied(schema: StructuralSchema | undefined, live: unknown, config: unknown): unknown {
  if (config === undefined) return live;
  if (Array.isArray(config)) {
    const listType = schema?.['x-kubernetes-list-type'];
    const current = Array.isArray(live) ? [...(live as unknown[])] : [];
    // Items are found by their canonical JSON in a Map: comparing each with every other made an
    // apply of 30,000 users hold the event loop 7 s of CPU (the schema's maxItems is checked after).
    if (listType === 'set') {
      const present = new Set(current.map((c) => canonicalJson(c)));
      for (const item of config) {
        const id = canonicalJson(item);
        if (!present.has(id)) current.push(item);
        present.add(id);
      }
      return current;
    }
    if (listType === 'map') {
      const keys = schema?.['x-kubernetes-list-map-keys'] ?? [];
      const identity = (item: unknown) => (isJsonMap(item) ? canonicalJson(keys.map((k) => item[k] ?? null)) : undefined);
      const at = new Map<string, number>();
      current.forEach((c, i) => {
        const id = identity(c);
        if (id !== undefined && !at.has(id)) at.set(id, i);
      });
      for (const item of config) {
        const id = identity(item);
        const i = id === undefined ? undefined : at.get(id);
        if (i !== undefined) current[i] = mergeApplied(schema?.items, current[i], item);
        else {
          if (id !== undefined) at.set(id, current.length);
          current.push(item);
        }
      }
      return current;
    }
    return structuredClone(config);
  }
  if (isJsonMap(config) && schema && (schema.properties || typeof schema.additionalProperties === 'object')) {
    const out: Record<string, unknown> = isJsonMap(live) ? { ...live } : {};
    for (const [k, v] of Object.entries(config)) setField(out, k, mergeApplied(childSchema(schema, k), out[k], v));
    return out;
  }
  return structuredClone(config);
}

/** Removes the field or list item at one path (a `.` path removes its container). */
export function removePath(schema: StructuralSchema, obj: Record<string, unknown>, path: FieldPath): void {
  const keys = path.at(-1)?.kind === 'self' ? path.slice(0, -1) : path;
  if (keys.length === 0) return;
  let node: unknown = obj;
  let nodeSchema: StructuralSchema | undefined = schema;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const last = i === keys.length - 1;
    if (key.kind === 'field' && isJsonMap(node)) {
      if (last) {
        delete node[key.name];
        return;
      }
      nodeSchema = childSchema(nodeSchema, key.name);
      node = node[key.name];
    } else if (Array.isArray(node)) {
      const list = node as unknown[];
      let index = -1;
      if (key.kind === 'value') {
        const value = JSON.parse(key.json) as unknown;
        index = list.findIndex((item) => isDeepStrictEqual(item, value));
      } else if (key.kind === 'key') {
        const fields = JSON.parse(key.json) as Record<string, unknown>;
        index = list.findIndex((item) => sameKeys(item, fields, Object.keys(fields)));
      }
      if (index < 0) return;
      if (last) {
        list.splice(index, 1);
        return;
      }
      nodeSchema = nodeSchema?.items;
      node = list[index];
    } else return;
  }
}
