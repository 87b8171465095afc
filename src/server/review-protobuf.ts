/**
 * kubectl sends its access reviews (auth whoami, auth can-i) as Kubernetes protobuf, not JSON:
 * the envelope is the magic `k8s\0` and a runtime.Unknown holding the object's own message. This
 * decodes just the fields the three review kinds carry (the field numbers of
 * k8s.io/api/authorization/v1 and authentication/v1 generated.proto) into their JSON shape.
 */
import { badRequest } from '../api/errors.js';

export const protobufMediaType = 'application/vnd.kubernetes.protobuf';

type Fields = Map<number, Buffer[]>;

const malformed = () => badRequest('the request body is not a valid Kubernetes protobuf message');

function varint(buf: Buffer, at: number): [number, number] {
  let value = 0;
  for (let shift = 0, i = at; i < buf.length && shift < 64; shift += 7, i++) {
    value += (buf[i]! & 0x7f) * 2 ** shift;
    if ((buf[i]! & 0x80) === 0) return [value, i + 1];
  }
  throw malformed();
}

/** The length-delimited fields of one message by number; other wire types are skipped. */
function fields(buf: Buffer | undefined): Fields {
  const out: Fields = new Map();
  let at = 0;
  while (buf && at < buf.length) {
    const [tag, next] = varint(buf, at);
    const [field, wire] = [Math.floor(tag / 8), tag % 8];
    at = next;
    if (wire === 0) at = varint(buf, at)[1];
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const [length, start] = varint(buf, at);
      if (start + length > buf.length) throw malformed();
      out.set(field, [...(out.get(field) ?? []), buf.subarray(start, start + length)]);
      at = start + length;
    } else throw malformed();
  }
  if (at !== (buf?.length ?? 0)) throw malformed();
  return out;
}

const str = (f: Fields, n: number) => f.get(n)?.[0]?.toString('utf8');

/** The strings of a message, by field number -> JSON name, leaving out the unset ones. */
function strings(buf: Buffer | undefined, names: Record<number, string>): Record<string, string> {
  const f = fields(buf);
  return Object.fromEntries(Object.entries(names).flatMap(([n, name]) => (f.has(Number(n)) ? [[name, str(f, Number(n))!]] : [])));
}

const resourceAttributes = { 1: 'namespace', 2: 'verb', 3: 'group', 4: 'version', 5: 'resource', 6: 'subresource', 7: 'name' };

/** A review sent as protobuf, as the object JSON would have carried. */
export function decodeReview(body: Buffer | undefined): Record<string, unknown> {
  if (!body || body.length < 4 || body.subarray(0, 4).toString('latin1') !== 'k8s\0') throw malformed();
  const unknown = fields(body.subarray(4));
  const typeMeta = fields(unknown.get(1)?.[0]);
  const kind = str(typeMeta, 2);
  const object = fields(unknown.get(2)?.[0]);
  const base = { apiVersion: str(typeMeta, 1), kind };
  if (kind === 'SelfSubjectAccessReview') {
    const spec = fields(object.get(2)?.[0]);
    return {
      ...base,
      spec: {
        ...(spec.has(1) ? { resourceAttributes: strings(spec.get(1)![0], resourceAttributes) } : {}),
        ...(spec.has(2) ? { nonResourceAttributes: strings(spec.get(2)![0], { 1: 'path', 2: 'verb' }) } : {}),
      },
    };
  }
  if (kind === 'SelfSubjectRulesReview') return { ...base, spec: strings(object.get(2)?.[0], { 1: 'namespace' }) };
  return base;
}
