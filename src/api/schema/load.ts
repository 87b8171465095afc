/**
 * Loads the JSON Schemas shipped in schemas/ (beside src/ and dist/ alike), gives each kind's
 * validator (compiled ahead of time: validators.generated.ts), and resolves each schema into a
 * structural schema: one tree with every $ref replaced by its target.
 */
import type { ValidateFunction } from 'ajv';
import type { SchemaId } from '../resources.js';
import { readSchemaFile } from './files.js';
import { accessRequestValidator, federatedCredentialValidator, ownedAccessKeyValidator, teamValidator } from './validators.generated.js';

/** The subset of JSON Schema the structural walkers read. */
export interface StructuralSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: boolean | StructuralSchema;
  items?: StructuralSchema;
  required?: string[];
  enum?: unknown[];
  writeOnly?: boolean;
  deprecated?: boolean;
  default?: unknown;
  format?: string;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  /** teamkeys: git's value is the whole value of this field (it grants or defines access). */
  'x-teamkeys-authoritative'?: boolean;
  [keyword: string]: unknown;
}

const files = ['objectmeta.schema.json', 'team.schema.json', 'ownedaccesskey.schema.json', 'federatedcredential.schema.json', 'accessrequest.schema.json'] as const;

let raw: Map<string, StructuralSchema> | undefined;

/** The schema of a declared property: own properties only, so `__proto__` or `constructor` is undeclared. */
export function propertySchema(schema: StructuralSchema | undefined, key: string): StructuralSchema | undefined {
  return schema?.properties && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
}

export function rawSchemas(): Map<string, StructuralSchema> {
  raw ??= new Map(files.map((f) => [f, JSON.parse(readSchemaFile(f)) as StructuralSchema]));
  return raw;
}

/**
 * The validators ajv's standalone code made from the schemas (scripts/gen-validators.mjs): no
 * schema is compiled at run time, which kept every command waiting about 100 ms at start.
 */
const validators: Record<SchemaId, ValidateFunction> = {
  'team.schema.json': teamValidator as ValidateFunction,
  'ownedaccesskey.schema.json': ownedAccessKeyValidator as ValidateFunction,
  'federatedcredential.schema.json': federatedCredentialValidator as ValidateFunction,
  'accessrequest.schema.json': accessRequestValidator as ValidateFunction,
};

/** The compiled ajv validator of a kind's schema. */
export function validatorFor(id: SchemaId): ValidateFunction {
  return validators[id];
}

const structural = new Map<SchemaId, StructuralSchema>();

/** A kind's schema with every $ref resolved, for the pruning, list and secret walkers. */
export function structuralSchema(id: SchemaId): StructuralSchema {
  let s = structural.get(id);
  if (!s) {
    s = deref(rawSchemas().get(id)!, id);
    structural.set(id, s);
  }
  return s;
}

function resolve(ref: string, fileId: string): { schema: StructuralSchema; fileId: string } {
  const [file, pointer = ''] = ref.split('#');
  const targetFile = file || fileId;
  let node: unknown = rawSchemas().get(targetFile);
  if (!node) throw new Error(`schema ${fileId}: unresolvable $ref ${ref}`);
  for (const part of pointer.split('/').filter(Boolean)) node = (node as Record<string, unknown>)[part];
  if (!node) throw new Error(`schema ${fileId}: unresolvable $ref ${ref}`);
  return { schema: node as StructuralSchema, fileId: targetFile };
}

function deref(schema: StructuralSchema, fileId: string): StructuralSchema {
  let node = schema;
  let file = fileId;
  if (typeof schema.$ref === 'string') {
    const target = resolve(schema.$ref, fileId);
    const { $ref: _ref, ...siblings } = schema;
    node = { ...target.schema, ...siblings };
    file = target.fileId;
  }
  const out: StructuralSchema = { ...node };
  delete out.definitions;
  delete out.$ref;
  if (node.properties) {
    out.properties = Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, deref(v, file)]));
  }
  if (node.items) out.items = deref(node.items, file);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') {
    out.additionalProperties = deref(node.additionalProperties, file);
  }
  return out;
}
