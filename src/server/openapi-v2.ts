/**
 * OpenAPI v2 (Swagger 2.0) for the group, converted from the v3 document (itself generated from the
 * JSON Schemas), so both describe the same kinds. Clients that still read /openapi/v2 (older
 * kubectl, client libraries' generators) find the kinds with their group-version-kind and the patch
 * types each PATCH consumes (never strategic merge: kubectl then sends merge patches).
 */
type Json = Record<string, unknown>;

/** Schema references move from components/schemas to definitions; `nullable` has no v2 spelling. */
function schemaToV2(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(schemaToV2);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value as Json)) {
    if (key === 'nullable') continue;
    if (key === '$ref' && typeof v === 'string') out.$ref = v.replace('#/components/schemas/', '#/definitions/');
    else out[key] = schemaToV2(v);
  }
  return out;
}

/** A v3 query or path parameter: its schema's type moves onto the parameter. */
function parameterToV2(p: Json): Json {
  const { schema, ...rest } = p as Json & { schema?: Json };
  return { ...rest, ...(schema ?? {}) };
}

function operationToV2(op: Json): Json {
  const { parameters, requestBody, responses, ...rest } = op as Json & { parameters?: Json[]; requestBody?: { content: Record<string, { schema: unknown }> }; responses?: Record<string, Json> };
  const out: Json = { ...rest, produces: ['application/json', 'application/yaml'], schemes: ['https'] };
  const params = (parameters ?? []).map(parameterToV2);
  if (requestBody) {
    const types = Object.keys(requestBody.content);
    out.consumes = types;
    params.push({ name: 'body', in: 'body', required: true, schema: schemaToV2(requestBody.content[types[0]!]!.schema) });
  }
  if (params.length > 0) out.parameters = params;
  out.responses = Object.fromEntries(
    Object.entries(responses ?? {}).map(([code, r]) => {
      const content = r.content as Record<string, { schema: unknown }> | undefined;
      const schema = content?.['application/json']?.schema;
      return [code, { description: r.description, ...(schema ? { schema: schemaToV2(schema) } : {}) }];
    }),
  );
  return out;
}

export function swaggerDocument(v3: Json): Json {
  const paths: Json = {};
  for (const [path, item] of Object.entries(v3.paths as Record<string, Json>)) {
    const converted: Json = {};
    for (const [key, value] of Object.entries(item)) {
      if (key === 'parameters') converted.parameters = (value as Json[]).map(parameterToV2);
      else converted[key] = operationToV2(value as Json);
    }
    paths[path] = converted;
  }
  const schemas = (v3.components as { schemas: Json }).schemas;
  return { swagger: '2.0', info: v3.info, paths, definitions: schemaToV2(schemas) };
}

/** What client-go asks /openapi/v2 for (gnostic's openapi_v2.Document), and accepts only. */
export const swaggerProtobufType = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/** One length-delimited protobuf field (these values are all shorter than 128 bytes). */
const field = (n: number, value: Buffer) => Buffer.concat([Buffer.from([(n << 3) | 2, value.length]), value]);

/**
 * The protobuf form carries the document's header only (swagger = 1, info = 2 with title = 1 and
 * version = 2): no definitions, so kubectl's client-side validation (which it runs on a `kind: List`
 * file) finds no schema for these kinds and leaves each item to the server's fieldValidation.
 */
export function swaggerProtobuf(v3: Json): Buffer {
  const info = v3.info as { title: string; version: string };
  return Buffer.concat([field(1, Buffer.from('2.0')), field(2, Buffer.concat([field(1, Buffer.from(info.title)), field(2, Buffer.from(info.version))]))]);
}
