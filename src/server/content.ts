/** Request bodies by Content-Type, and responses by Accept: JSON, YAML, a Table for kubectl, or metadata only. */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ApiError, badRequest, unsupportedMediaType } from '../api/errors.js';

export const maxBodyBytes = 3 * 1024 * 1024;
/** Deeper bodies are refused before anything walks them recursively. */
const maxDepth = 100;

export type BodyType = 'json' | 'yaml' | 'json-patch' | 'merge-patch' | 'apply-patch' | 'strategic-merge-patch';

const bodyTypes: Record<string, BodyType> = {
  'application/json': 'json',
  'application/yaml': 'yaml',
  'application/x-yaml': 'yaml',
  'text/yaml': 'yaml',
  'application/json-patch+json': 'json-patch',
  'application/merge-patch+json': 'merge-patch',
  'application/apply-patch+yaml': 'apply-patch',
  'application/strategic-merge-patch+json': 'strategic-merge-patch',
};

/** The media type without parameters, lower case: `application/json; charset=utf-8` -> `application/json`. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export function bodyTypeOf(contentType: string | undefined, allowed: BodyType[]): BodyType {
  const type = bodyTypes[mediaType(contentType)];
  if (!type || !allowed.includes(type)) {
    const supported = Object.entries(bodyTypes)
      .filter(([, t]) => allowed.includes(t))
      .map(([m]) => m);
    throw unsupportedMediaType(mediaType(contentType) || '(none)', supported);
  }
  return type;
}

function checkDepth(value: unknown): void {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > maxDepth) throw badRequest(`the request body is nested more than ${maxDepth} levels deep`);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
}

/** Parses a body of the given type. Malformed input is a 400 that says where it went wrong. */
export function parseBody(raw: Buffer | undefined, type: BodyType): unknown {
  if (!raw || raw.length === 0) throw badRequest('the request body is empty');
  const text = raw.toString('utf8');
  if (text.includes('\uFFFD') && !Buffer.from(text, 'utf8').equals(raw)) throw badRequest('the request body is not valid UTF-8');
  let value: unknown;
  if (type === 'yaml' || type === 'apply-patch') {
    try {
      // A key given twice is not an error here: fieldValidation decides (see duplicate-fields.ts).
      value = parseYaml(text, { maxAliasCount: 100, uniqueKeys: false, prettyErrors: true });
    } catch (err) {
      throw badRequest(`the request body is not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
  } else {
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw badRequest(`the request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  checkDepth(value);
  return value;
}

/** `partial`: meta.k8s.io/v1 PartialObjectMetadata (or its List), client-go's metadata-only client. */
export type ResponseFormat = 'json' | 'yaml' | 'table' | 'partial';

/** What an endpoint can render besides JSON and YAML: a read of one object or of a list can be a Table or metadata only. */
export type Readable = false | 'object' | 'list';

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(header: string | undefined): MediaRange[] {
  if (!header) return [{ type: '*/*', params: {} }];
  return header.split(',').map((part) => {
    const [type, ...rest] = part.split(';').map((p) => p.trim());
    const params: Record<string, string> = {};
    for (const p of rest) {
      const [k, v] = p.split('=');
      if (k && v !== undefined) params[k.toLowerCase()] = v;
    }
    return { type: (type ?? '').toLowerCase(), params };
  });
}

/** The server-side conversion a media range asks for (`as=Table;g=meta.k8s.io;v=v1`), if this endpoint offers it. */
function conversion(range: MediaRange, readable: Readable): ResponseFormat | undefined {
  const { as, g, v } = range.params;
  if (!readable || g !== 'meta.k8s.io' || range.type !== 'application/json') return undefined;
  if (as === 'Table' && (v === 'v1' || v === 'v1beta1')) return 'table';
  const partial = readable === 'list' ? 'PartialObjectMetadataList' : 'PartialObjectMetadata';
  if (as === partial && v === 'v1') return 'partial';
  return undefined;
}

/**
 * The first acceptable format in the client's order. A Table or metadata only is offered only where
 * the endpoint reads objects (get, list, watch), as kube-apiserver does.
 */
export function negotiate(accept: string | undefined, readable: Readable): ResponseFormat {
  for (const range of parseAccept(accept)) {
    if (range.params.as) {
      const format = conversion(range, readable);
      if (format) return format;
      continue; // other server-side conversions (discovery, protobuf) are not offered
    }
    if (['application/json', 'application/*', '*/*'].includes(range.type)) return 'json';
    if (['application/yaml', 'application/x-yaml', 'text/yaml'].includes(range.type)) return 'yaml';
  }
  throw new ApiError(
    406,
    'NotAcceptable',
    'only the following media types are accepted: application/json, application/yaml, application/json;as=Table;v=v1;g=meta.k8s.io, ' +
      'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io, application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
  );
}

export function serialize(value: unknown, format: 'json' | 'yaml'): { body: string; contentType: string } {
  return format === 'yaml'
    ? { body: stringifyYaml(value), contentType: 'application/yaml' }
    : { body: JSON.stringify(value), contentType: 'application/json' };
}
