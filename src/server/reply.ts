/** Writing responses: content negotiation, Warning headers, and Tables where kubectl asks. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KubeObject, ListMeta } from '../api/types.js';
import { negotiate, serialize } from './content.js';
import { partialList, partialObject } from './partial-metadata.js';
import { toTable, type IncludeObject } from './table.js';

/** What the Warning headers of one response may hold, as kube-apiserver's warning recorder. */
const warningTotalChars = 4 * 1024;
const warningItemChars = 256;

const header = (w: string) => `299 - "${w.replace(/["\\]/g, '\\$&')}"`;

/**
 * kube's Warning headers: `299 - "text"`, each text once. Past 4 KiB in all, as kube does, every
 * text is cut to 256 characters and what still does not fit is dropped: a body of a thousand
 * unknown fields would otherwise send headers no client reads (Node's limit is 16 KiB).
 */
export function warningHeader(warnings: string[]): string[] {
  // Cut before anything hashes them: a text past 4 KiB is never sent whole.
  const unique = [...new Set(warnings.map((w) => (w.length > warningTotalChars ? w.slice(0, warningTotalChars) : w)))];
  const all = unique.map(header);
  if (all.reduce((n, h) => n + h.length, 0) <= warningTotalChars) return all;
  const out: string[] = [];
  let written = 0;
  for (const w of unique) {
    const h = header(w.length > warningItemChars ? `${w.slice(0, warningItemChars)}...` : w);
    if (written + h.length > warningTotalChars) break;
    out.push(h);
    written += h.length;
  }
  return out;
}

/** The Warning header values set on `reply` before its body. */
export function earlierWarnings(reply: FastifyReply): string[] {
  const set = reply.getHeader('warning');
  return set === undefined ? [] : Array.isArray(set) ? set.map(String) : [String(set)];
}

export function send(req: FastifyRequest, reply: FastifyReply, code: number, value: unknown, warnings: string[] = []): FastifyReply {
  const { body, contentType } = serialize(value, negotiate(req.headers.accept, false) === 'yaml' ? 'yaml' : 'json');
  // Beside any set earlier (break-glass, server/auth/endpoint-auth.ts), never in place of them.
  if (warnings.length > 0) reply.header('Warning', [...earlierWarnings(reply), ...warningHeader(warnings)]);
  return reply.code(code).type(contentType).send(body);
}

/** A get or list answer: a Table when the client asks for one (kubectl get), metadata only, or the object(s). */
export function sendReadable(
  req: FastifyRequest,
  reply: FastifyReply,
  kind: string,
  value: KubeObject | { metadata: ListMeta; items: KubeObject[] } | (() => KubeObject),
  includeObject: IncludeObject,
  /** The value's JSON (UTF-8), when already at hand (the watch cache's): sent as it is for JSON. */
  json?: Buffer,
): FastifyReply {
  const format = negotiate(req.headers.accept, typeof value === 'object' && 'items' in value ? 'list' : 'object');
  if (format === 'json' && json !== undefined) return reply.code(200).type('application/json').send(json);
  // A value not decoded yet (the watch cache's) is decoded only when it must be rewritten.
  if (typeof value === 'function') value = value();
  if (format === 'partial') {
    const partial = 'items' in value ? partialList(value) : partialObject(value);
    return reply.code(200).type('application/json').send(JSON.stringify(partial));
  }
  if (format !== 'table') {
    const { body, contentType } = serialize(value, format);
    return reply.code(200).type(contentType).send(body);
  }
  const table =
    'items' in value
      ? toTable(kind, value.items, { metadata: value.metadata, includeObject })
      : toTable(kind, [value], { metadata: { resourceVersion: value.metadata.resourceVersion ?? '' }, includeObject });
  return reply.code(200).type('application/json').send(JSON.stringify(table));
}
