/** Request bodies by Content-Type, and responses by Accept: JSON, YAML, a Table for kubectl, or metadata only. */
import { stringify as stringifyYaml } from 'yaml';
import { ApiError, badRequest, tooLarge, unsupportedMediaType } from '../api/errors.js';
import { checkDecoded, checkNodes } from './decoded-bounds.js';
import { jsonShape } from './json-scan.js';
import { decodeYaml, maxDepth, type YamlResult } from './yaml-body.js';
import { decodeYamlOffThread } from './yaml-thread.js';

export { maxBodyBytes } from './body-limit.js';
import { maxBodyBytes } from './body-limit.js';

export type BodyType = 'json' | 'yaml' | 'json-patch' | 'merge-patch' | 'apply-patch' | 'strategic-merge-patch';

/** The media types of an object body (a create, an update, a review, DeleteOptions). */
export const objectBodies: BodyType[] = ['json', 'yaml'];

/** By media type; a Map, so a Content-Type of `constructor` finds nothing. */
const bodyTypes = new Map<string, BodyType>([
  ['application/json', 'json'],
  ['application/yaml', 'yaml'],
  ['application/x-yaml', 'yaml'],
  ['text/yaml', 'yaml'],
  ['application/json-patch+json', 'json-patch'],
  ['application/merge-patch+json', 'merge-patch'],
  ['application/apply-patch+yaml', 'apply-patch'],
  ['application/strategic-merge-patch+json', 'strategic-merge-patch'],
]);

/** The media type without parameters, lower case: `application/json; charset=utf-8` -> `application/json`. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export function bodyTypeOf(contentType: string | undefined, allowed: BodyType[]): BodyType {
  const type = bodyTypes.get(mediaType(contentType));
  if (!type || !allowed.includes(type)) {
    const supported = [...bodyTypes]
      .filter(([, t]) => allowed.includes(t))
      .map(([m]) => m);
    throw unsupportedMediaType(mediaType(contentType) || '(none)', supported);
  }
  return type;
}

const isYaml = (type: BodyType | undefined) => type === 'yaml' || type === 'apply-patch';

/** The body as text; bytes that are not UTF-8 are a 400, not replacement characters. */
function bodyText(raw: Buffer): string {
  const text = raw.toString('utf8');
  if (text.includes('\uFFFD') && !Buffer.from(text, 'utf8').equals(raw)) throw badRequest('the request body is not valid UTF-8');
  return text;
}

/** YAML bodies decoded off the event loop as they arrived (server.ts), by their buffer. */
const decodedYaml = new WeakMap<Buffer, YamlResult>();

/**
 * Decodes a YAML body in the worker thread before its route runs, so parseBody finds the result
 * instead of holding the event loop. Other bodies, and bodies that are not UTF-8, are left to
 * parseBody, which reports their errors once the route has decided the media type is acceptable.
 */
export async function preDecodeBody(contentType: string | undefined, raw: Buffer, caller: string): Promise<void> {
  if (raw.length === 0 || !isYaml(bodyTypes.get(mediaType(contentType)))) return;
  let text: string;
  try {
    text = bodyText(raw);
  } catch {
    return;
  }
  decodedYaml.set(raw, await decodeYamlOffThread(text, caller));
}

/** A YAML body decoded: by the worker thread as it arrived, else here (and kept for yamlDuplicateKeys). */
function yamlResult(raw: Buffer): YamlResult {
  let result = decodedYaml.get(raw);
  if (!result) {
    result = decodeYaml(bodyText(raw));
    decodedYaml.set(raw, result);
  }
  return result;
}

/**
 * Keys a YAML body gives twice in one mapping, in kube's words (`line 5: key "x" already set in
 * map`), found by the decoding parseBody did: the body is not parsed again on the event loop.
 */
export function yamlDuplicateKeys(raw: Buffer): string[] {
  const result = yamlResult(raw);
  return 'duplicates' in result ? result.duplicates : [];
}

/**
 * Parses a body of the given type. Malformed input is a 400 that says where it went wrong; a
 * decoded form past the ceilings of decoded-bounds.ts is a 413.
 */
export function parseBody(raw: Buffer | undefined, type: BodyType): unknown {
  if (!raw || raw.length === 0) throw badRequest('the request body is empty');
  let value: unknown;
  if (isYaml(type)) {
    const result = yamlResult(raw);
    if ('error' in result) throw result.tooLarge ? tooLarge(result.error) : badRequest(result.error);
    value = result.value;
  } else {
    const text = bodyText(raw);
    // V8 parses `[[[[...` a million deep in about a second of the event loop, and an object of
    // 150,000 fields in 100 ms: refuse both unparsed.
    const shape = jsonShape(text, maxDepth);
    if (shape === 'deep') throw badRequest(`the request body is nested more than ${maxDepth} levels deep`);
    checkNodes(shape);
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw badRequest(`the request body is not valid JSON: ${jsonProblem(err)}`);
    }
  }
  checkDecoded(value, raw.length, maxBodyBytes);
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
    // No prototype: a parameter named `__proto__` or `constructor` is just an unknown parameter.
    const params: Record<string, string> = Object.create(null) as Record<string, string>;
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

/**
 * V8's JSON.parse message without the excerpt of the body it quotes (`Unexpected token 'x', "…" is
 * not valid JSON`): the body may hold an access key, and an error never repeats one (found by a
 * review: an unquoted key value came back in the 400). Messages that name a position only are kept.
 */
export function jsonProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return /"/.test(message) ? 'unexpected text (not repeated here)' : message;
}
