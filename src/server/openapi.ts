/**
 * OpenAPI v3 for the group, generated from the JSON Schemas: what `kubectl explain` reads, and
 * how kubectl learns that this server validates fields (the fieldValidation parameter on PATCH).
 */
import { createHash } from 'node:crypto';
import { keyFormatSource } from '../api/key-format.js';
import type { ResourceModel } from '../api/model.js';
import type { StructuralSchema } from '../api/schema/load.js';

type Json = Record<string, unknown>;

/** JSON Schema draft 7 to the OpenAPI 3.0 dialect: nullable instead of type arrays, enum for const. */
function toOpenApi(schema: StructuralSchema): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (['$schema', '$id', 'definitions', 'title'].includes(key)) continue;
    if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((t) => t !== 'null');
      out.type = types[0];
      if (types.length < value.length) out.nullable = true;
    } else if (key === 'const') out.enum = [value];
    else if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, StructuralSchema>).map(([k, v]) => [k, toOpenApi(v)]));
    } else if ((key === 'items' || key === 'additionalProperties') && typeof value === 'object' && value !== null) {
      out[key] = toOpenApi(value as StructuralSchema);
    } else out[key] = value;
  }
  return out;
}

const queryParam = (name: string, description: string, type = 'string') => ({
  name,
  in: 'query',
  description,
  schema: { type },
});

const writeParams = [
  queryParam('dryRun', 'When "All", every step but the write runs.'),
  queryParam('fieldManager', 'Name of the actor making the change.'),
  queryParam('fieldValidation', 'Unknown fields: Strict (400), Warn (default: dropped with a Warning header) or Ignore.'),
  queryParam('pretty', 'Ignored; accepted for compatibility.'),
];
const listParams = [
  queryParam('labelSelector', 'Select objects by label.'),
  queryParam('fieldSelector', 'Select objects by metadata.name.'),
  queryParam('limit', 'At most this many items.', 'integer'),
  queryParam('continue', 'Token from the previous page.'),
  queryParam('resourceVersion', 'Read at or after this revision.'),
  queryParam('resourceVersionMatch', 'Exact or NotOlderThan.'),
  queryParam('watch', 'Stream changes.', 'boolean'),
  queryParam('allowWatchBookmarks', 'Send BOOKMARK events.', 'boolean'),
  queryParam('timeoutSeconds', 'End a watch after this many seconds; no later than the server allows (--min-request-timeout, jittered).', 'integer'),
];
const deleteParams = [
  queryParam('dryRun', 'When "All", nothing is deleted.'),
  queryParam('gracePeriodSeconds', 'Seconds before the object is removed.', 'integer'),
  queryParam('propagationPolicy', 'Background, Foreground or Orphan.'),
];

function ref(name: string) {
  return { $ref: `#/components/schemas/${name}` };
}

function ok(schemaName: string, code = '200') {
  return { [code]: { description: 'OK', content: { 'application/json': { schema: ref(schemaName) }, 'application/yaml': { schema: ref(schemaName) } } } };
}

function paths(model: ResourceModel, schemaName: string, listName: string, prefix: string): Json {
  const { info } = model;
  const gvk = { group: info.group, version: info.version, kind: info.kind };
  const op = (action: string, extra: Json) => ({
    operationId: `${action}${info.kind}`,
    tags: [`${info.group}_v1`],
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    ...extra,
  });
  const body = (types: string[]) => ({
    required: true,
    content: Object.fromEntries(types.map((t) => [t, { schema: ref(schemaName) }])),
  });
  const name = { name: 'name', in: 'path', required: true, description: `name of the ${info.kind}`, schema: { type: 'string' } };
  const item = {
    parameters: [name],
    get: op('get', { responses: ok(schemaName) }),
    put: op('put', { parameters: writeParams, requestBody: body(['application/json', 'application/yaml']), responses: ok(schemaName) }),
    patch: op('patch', {
      parameters: [...writeParams, queryParam('force', 'Take over conflicting fields (apply).', 'boolean')],
      requestBody: {
        required: true,
        content: Object.fromEntries(
          ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'].map((t) => [t, { schema: { type: 'object' } }]),
        ),
      },
      responses: ok(schemaName),
    }),
    delete: op('delete', { parameters: deleteParams, responses: { '200': { description: 'OK' } } }),
  };
  return {
    [`${prefix}/${info.plural}`]: {
      get: op('list', { parameters: listParams, responses: ok(listName) }),
      post: op('post', { parameters: writeParams, requestBody: body(['application/json', 'application/yaml']), responses: ok(schemaName, '201') }),
      delete: op('deletecollection', { parameters: [...listParams, ...deleteParams], responses: ok(listName) }),
    },
    [`${prefix}/${info.plural}/{name}`]: item,
    [`${prefix}/${info.plural}/{name}/status`]: {
      parameters: [name],
      get: op('get', { responses: ok(schemaName) }),
      put: op('put', { parameters: writeParams, requestBody: body(['application/json']), responses: ok(schemaName) }),
      patch: op('patch', { parameters: writeParams, responses: ok(schemaName) }),
    },
    ...(info.plural === 'ownedaccesskeys'
      ? {
          [`${prefix}/${info.plural}/{name}/rotation`]: {
            parameters: [name],
            post: op('rotate', {
              description: 'Rotates the key (a KeyRotation: spec.key, spec.overlapSeconds, spec.awaitConfirmation; 201 with the new value once), or confirms a rotation awaiting it (spec.confirm; 200).',
              parameters: writeParams,
              requestBody: { required: true, content: { 'application/json': { schema: keyRotationSchema } } },
              responses: { ...ok(schemaName, '201'), ...ok(schemaName) },
            }),
          },
        }
      : {}),
  };
}

/** The body of the rotation subresource (src/api/key-rotation.ts decodes it). */
const keyRotationSchema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string', enum: ['KeyRotation'] },
    spec: {
      type: 'object',
      properties: {
        key: { type: 'string', pattern: `^(?:${keyFormatSource}|[A-Za-z0-9]{32,256})$`, description: 'The new value; generated in the format tk_... (docs/keys.md) when absent.' },
        overlapSeconds: { type: 'integer', minimum: 0, maximum: 2592000, description: 'How long the previous value keeps working.' },
        awaitConfirmation: { type: 'boolean', description: 'The previous value works until the rotation is confirmed; the overlap starts then.' },
        confirm: { type: 'boolean', description: 'Confirms a rotation that awaits confirmation; nothing else may be set.' },
        idempotencyKey: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$', description: "Names this rotation: a retry with the key's last rotation's idempotency key gets that rotation back (200, without the value), not a new one." },
      },
    },
  },
};

/** The OpenAPI v3 document of group/v1, kube-style: schemas named `<reversed group>.v1.<Kind>`. */
export function openApiDocument(models: ResourceModel[]): Json {
  const group = models[0]!.info.group;
  const reversed = group.split('.').reverse().join('.');
  const schemas: Json = {};
  let allPaths: Json = {};
  for (const model of models) {
    const { info } = model;
    const schemaName = `${reversed}.v1.${info.kind}`;
    const listName = `${reversed}.v1.${info.listKind}`;
    schemas[schemaName] = {
      ...toOpenApi(model.schema),
      'x-kubernetes-group-version-kind': [{ group, version: 'v1', kind: info.kind }],
    };
    schemas[listName] = {
      type: 'object',
      description: `A list of ${info.kind} objects.`,
      required: ['items'],
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object', properties: { resourceVersion: { type: 'string' }, continue: { type: 'string' } } },
        items: { type: 'array', items: ref(schemaName) },
      },
      'x-kubernetes-group-version-kind': [{ group, version: 'v1', kind: info.listKind }],
    };
    allPaths = { ...allPaths, ...paths(model, schemaName, listName, `/apis/${group}/v1`) };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'teamkeys management API', version: 'v1' },
    paths: allPaths,
    components: { schemas },
  };
}

/** The /openapi/v3 index: one entry per group version, with a content hash kubectl caches by. */
export function openApiIndex(group: string, document: Json): Json {
  const hash = createHash('sha512').update(JSON.stringify(document)).digest('hex').slice(0, 64).toUpperCase();
  return { paths: { [`apis/${group}/v1`]: { serverRelativeURL: `/openapi/v3/apis/${group}/v1?hash=${hash}` } } };
}
