/**
 * kubectl sends its SelfSubject*Reviews (auth whoami, auth can-i) as Kubernetes protobuf, not JSON:
 * the envelope is the magic `k8s\0` and a runtime.Unknown holding the object's own message. This
 * decodes just the fields the three review kinds carry (the field numbers of
 * k8s.io/api/authorization/v1 and authentication/v1 generated.proto) into their JSON shape.
 *
 * Linear in the body, with a small constant: a field's occurrences are kept as offsets into the
 * body (no copy, no object per occurrence), and a message field that occurs more than once is
 * decoded as the merge of its occurrences (protobuf's rule) by reading each range in turn. An
 * 80 KB body of 40,000 empty fields once cost 800 million copies and held the event loop 12 s.
 */
import { badRequest } from '../api/errors.js';

export const protobufMediaType = 'application/vnd.kubernetes.protobuf';

/** Where each length-delimited field occurs, by number: flat [start, end, start, end, ...] offsets. */
type Fields = Map<number, number[]>;

interface Message {
  buf: Buffer;
  fields: Fields;
}

const malformed = () => badRequest('the request body is not a valid Kubernetes protobuf message');

/** Reads a varint at `at`; its end goes to `cursor.at` (no tuple per read: bodies hold millions of them). */
function varint(buf: Buffer, at: number, end: number, cursor: { at: number }): number {
  let value = 0;
  for (let shift = 0, i = at; i < end && shift < 64; shift += 7, i++) {
    value += (buf[i]! & 0x7f) * 2 ** shift;
    if ((buf[i]! & 0x80) === 0) {
      cursor.at = i + 1;
      return value;
    }
  }
  throw malformed();
}

/** The length-delimited fields of one message spread over `ranges` of `buf`; other wire types are skipped. */
function decode(buf: Buffer, ranges: number[] | undefined): Message {
  const fields: Fields = new Map();
  const cursor = { at: 0 };
  for (let r = 0; ranges && r < ranges.length; r += 2) {
    const end = ranges[r + 1]!;
    cursor.at = ranges[r]!;
    while (cursor.at < end) {
      const tag = varint(buf, cursor.at, end, cursor);
      const wire = tag % 8;
      if (wire === 0) varint(buf, cursor.at, end, cursor);
      else if (wire === 1) cursor.at += 8;
      else if (wire === 5) cursor.at += 4;
      else if (wire === 2) {
        const length = varint(buf, cursor.at, end, cursor);
        const start = cursor.at;
        if (start + length > end) throw malformed();
        const field = Math.floor(tag / 8);
        const seen = fields.get(field);
        if (seen) seen.push(start, start + length);
        else fields.set(field, [start, start + length]);
        cursor.at = start + length;
      } else throw malformed();
    }
    if (cursor.at !== end) throw malformed();
  }
  return { buf, fields };
}

/** A string field: the last occurrence wins, as in every protobuf decoder. */
function str(m: Message, n: number): string | undefined {
  const r = m.fields.get(n);
  return r && m.buf.toString('utf8', r[r.length - 2], r[r.length - 1]);
}

/** An embedded message field, its occurrences merged. */
const sub = (m: Message, n: number): Message => decode(m.buf, m.fields.get(n));

/** The strings of a message, by field number -> JSON name, leaving out the unset ones. */
function strings(m: Message, names: [number, string][]): Record<string, string> {
  return Object.fromEntries(names.flatMap(([n, name]) => (m.fields.has(n) ? [[name, str(m, n)!]] : [])));
}

const resourceAttributes: [number, string][] = [[1, 'namespace'], [2, 'verb'], [3, 'group'], [4, 'version'], [5, 'resource'], [6, 'subresource'], [7, 'name']];

/** A review sent as protobuf, as the object JSON would have carried. */
export function decodeSelfSubjectReview(body: Buffer | undefined): Record<string, unknown> {
  if (!body || body.length < 4 || body.subarray(0, 4).toString('latin1') !== 'k8s\0') throw malformed();
  const unknown = decode(body, [4, body.length]);
  const typeMeta = sub(unknown, 1);
  const kind = str(typeMeta, 2);
  const object = sub(unknown, 2);
  const base = { apiVersion: str(typeMeta, 1), kind };
  if (kind === 'SelfSubjectAccessReview') {
    const spec = sub(object, 2);
    return {
      ...base,
      spec: {
        ...(spec.fields.has(1) ? { resourceAttributes: strings(sub(spec, 1), resourceAttributes) } : {}),
        ...(spec.fields.has(2) ? { nonResourceAttributes: strings(sub(spec, 2), [[1, 'path'], [2, 'verb']]) } : {}),
      },
    };
  }
  if (kind === 'SelfSubjectRulesReview') return { ...base, spec: strings(sub(object, 2), [[1, 'namespace']]) };
  return base;
}
