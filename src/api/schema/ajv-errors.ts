/** Turns ajv's errors into kube-style field errors with kube's wording and field paths. */
import type { ErrorObject } from 'ajv';
import { joinPath, type FieldError } from '../field-errors.js';
import { propertySchema, type StructuralSchema } from './load.js';

/**
 * `/spec/users/0` -> `spec.users[0]`. The schema tells map keys (label keys: `[key]`) from
 * properties (`.key`), as kube renders them.
 */
export function pointerToFieldPath(pointer: string, schema: StructuralSchema | undefined): string {
  let path = '';
  let node = schema;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node?.items) {
      path = joinPath(path, Number(key));
      node = node.items;
    } else if (propertySchema(node, key)) {
      path = joinPath(path, key);
      node = propertySchema(node, key);
    } else if (node && typeof node.additionalProperties === 'object') {
      path = `${path}[${key}]`;
      node = node.additionalProperties;
    } else {
      path = joinPath(path, key);
      node = undefined;
    }
  }
  return path;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/**
 * Maps ajv errors. Values under a secret path are never echoed. Errors of schema combinators that
 * only repeat a nested error are dropped, and each (field, type) is reported once.
 */
export function ajvToFieldErrors(
  errors: ErrorObject[],
  schema: StructuralSchema,
  isSecret: (field: string) => boolean,
): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const base = pointerToFieldPath(e.instancePath, schema);
    const mapped = mapOne(e, base);
    if (!mapped) continue;
    if (isSecret(mapped.field)) delete mapped.value;
    const id = `${mapped.field}|${mapped.type}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(mapped);
  }
  return out;
}

function mapOne(e: ErrorObject, field: string): FieldError | undefined {
  const p = e.params as Record<string, unknown>;
  const data: unknown = e.data;
  const at = field || '<root>';
  switch (e.keyword) {
    case 'required':
      return { type: 'Required', field: joinPath(field, String(p.missingProperty)) };
    case 'type': {
      const expected = Array.isArray(p.type) ? (p.type as string[]).join(',') : String(p.type);
      return {
        type: 'TypeInvalid',
        field: at,
        value: jsonType(data),
        detail: `${at} in body must be of type ${expected}: "${jsonType(data)}"`,
      };
    }
    case 'enum':
      return {
        type: 'NotSupported',
        field: at,
        value: data,
        detail: `supported values: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'const':
      return { type: 'Invalid', field: at, value: data, detail: `must be ${JSON.stringify(p.allowedValue)}` };
    case 'pattern':
      return { type: 'Invalid', field: at, value: data, detail: `${at} in body should match '${String(p.pattern)}'` };
    case 'format':
      return { type: 'Invalid', field: at, value: data, detail: `${at} in body must be of type ${String(p.format)}: ${JSON.stringify(data)}` };
    case 'minLength':
      return { type: 'Invalid', field: at, value: data, detail: `${at} in body should be at least ${String(p.limit)} chars long` };
    case 'maxLength':
      return { type: 'TooLong', field: at, detail: `may not be more than ${String(p.limit)} bytes` };
    case 'minimum':
      return { type: 'Invalid', field: at, value: data, detail: `${at} in body should be greater than or equal to ${String(p.limit)}` };
    case 'maximum':
      return { type: 'Invalid', field: at, value: data, detail: `${at} in body should be less than or equal to ${String(p.limit)}` };
    case 'maxItems':
      return { type: 'TooMany', field: at, value: Array.isArray(data) ? data.length : data, detail: `must have at most ${String(p.limit)} items` };
    case 'additionalProperties':
      return { type: 'Forbidden', field: joinPath(field, String(p.additionalProperty)), detail: 'unknown field' };
    case 'if':
    case 'anyOf':
    case 'oneOf':
    case 'allOf':
      return undefined;
    default:
      return { type: 'Invalid', field: at, value: data, detail: e.message ?? e.keyword };
  }
}
