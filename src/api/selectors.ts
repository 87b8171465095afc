/** Label and field selectors: parsed once per request into matchers, errors as 400 BadRequest. */
import type { StoredApiObject } from './secrets.js';
import { badRequest } from './errors.js';
import { labelValueErrors, qualifiedNameErrors } from './names.js';
import type { AccessRequest, KubeObject } from './types.js';
import { owesReview } from './access-request.js';

/** A value of one of the watch cache's field indexes (registry/indexes.ts): `holder` ana, `team` payments. */
export interface IndexLookup {
  index: string;
  value: string;
}

/**
 * Where every object a visibility filter keeps is found: each one carries one of these index
 * values; undefined when they could be anywhere. Asked when the read happens (after the store's
 * revision is read), so that it follows the same rights the filter then applies.
 */
export type Within = () => readonly IndexLookup[] | undefined;

/** Keeps an object or not; a visibility filter may also say `within` where its objects are, so a list reads those, not the kind. */
export type Matcher = ((obj: KubeObject) => boolean) & { readonly within?: Within };

type Op = '=' | '!=' | 'in' | 'notin' | 'exists' | '!exists';

interface Requirement {
  key: string;
  op: Op;
  values: string[];
  /** The values as a set: a long `in (...)` list costs one lookup per object, not a walk of the list. */
  valueSet?: ReadonlySet<string>;
}

/** Splits on commas outside parentheses: `a in (x,y),b` -> [`a in (x,y)`, `b`]. */
function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim());
}

const keyPattern = '[A-Za-z0-9][-A-Za-z0-9_./]*';

function parseRequirement(text: string): Requirement {
  let m: RegExpMatchArray | null;
  let req: Requirement;
  if ((m = text.match(new RegExp(`^!\\s*(${keyPattern})$`)))) req = { key: m[1]!, op: '!exists', values: [] };
  else if ((m = text.match(new RegExp(`^(${keyPattern})$`)))) req = { key: m[1]!, op: 'exists', values: [] };
  else if ((m = text.match(new RegExp(`^(${keyPattern})\\s*(==|=|!=)\\s*([^\\s,()=!]*)$`)))) {
    req = { key: m[1]!, op: m[2] === '!=' ? '!=' : '=', values: [m[3]!] };
  } else if ((m = text.match(new RegExp(`^(${keyPattern})\\s+(in|notin)\\s*\\(([^()]*)\\)$`)))) {
    const values = m[3]!.split(',').map((v) => v.trim());
    req = { key: m[1]!, op: m[2] as Op, values };
  } else {
    throw badRequest(`unable to parse requirement: found '${text}', expected: key, key=value, key!=value, key in (values), key notin (values) or !key`);
  }
  const keyErrs = qualifiedNameErrors(req.key);
  if (keyErrs.length > 0) throw badRequest(`unable to parse requirement: key: Invalid value: "${req.key}": ${keyErrs.join('; ')}`);
  for (const v of req.values) {
    const valueErrs = labelValueErrors(v);
    if (valueErrs.length > 0) throw badRequest(`unable to parse requirement: values: Invalid value: "${v}": ${valueErrs.join('; ')}`);
  }
  return { ...req, valueSet: new Set(req.values) };
}

function matches(req: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, req.key);
  // Only an own label has a value: `constructor` must not read Object.prototype's.
  const value = has ? labels[req.key] : undefined;
  switch (req.op) {
    case 'exists':
      return has;
    case '!exists':
      return !has;
    case '=':
    case 'in':
      return has && req.valueSet!.has(value!);
    case '!=':
    case 'notin':
      return !has || !req.valueSet!.has(value!);
  }
}

/** A matcher for a label selector (=, ==, !=, in, notin, exists, !exists); undefined selects everything. */
export function parseLabelSelector(selector: string | undefined): Matcher | undefined {
  if (selector === undefined || selector.trim() === '') return undefined;
  const reqs = splitTopLevel(selector).map(parseRequirement);
  return (obj) => reqs.every((r) => matches(r, obj.metadata.labels ?? {}));
}

export interface FieldSelector {
  matcher: Matcher;
  /** Set when the selector pins one name, so the list can be a single lookup. */
  exactName?: string;
  /** Set when the selector reads sealed fields (keyHash): matched on stored objects, never on their API form. */
  readsSealed?: true;
}

/**
 * A Map, not an object: `fieldSelector=__proto__=x` or `valueOf=x` must find no getter. A getter
 * gives every value the field has: `keyHash` is an access key's current and previous value's
 * SHA-256 (`sha256:<hex>`, never shown), so `teamkeys scan` names a key it found without sending
 * its value, and only among the keys the caller may list.
 */
const fieldGetters = new Map<string, (obj: KubeObject) => string[]>([
  ['metadata.name', (obj) => [obj.metadata.name ?? '']],
  ['metadata.namespace', (obj) => [obj.metadata.namespace ?? '']],
  ['keyHash', (obj) => keyHashesOf(obj)],
  // An AccessRequest's owed review (break-glass use no approver has reviewed yet): `needsReview=true` lists them.
  ['needsReview', (obj) => (obj.kind === 'AccessRequest' ? [String(owesReview(obj as AccessRequest))] : [])],
]);

function keyHashesOf(obj: KubeObject): string[] {
  const sealed = (obj as StoredApiObject).sealed;
  return [sealed?.keyHash, sealed?.previousKeyHash].filter((h): h is string => h !== undefined);
}

/** A matcher for a field selector over metadata.name, metadata.namespace, keyHash and needsReview. */
export function parseFieldSelector(selector: string | undefined): FieldSelector | undefined {
  if (selector === undefined || selector.trim() === '') return undefined;
  const tests: Matcher[] = [];
  let exactName: string | undefined;
  let readsSealed = false;
  for (const part of splitTopLevel(selector)) {
    const m = part.match(/^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/);
    if (!m) throw badRequest(`invalid field selector: '${part}': expected field=value, field==value or field!=value`);
    const [, field, op, value] = m as unknown as [string, string, string, string];
    const get = fieldGetters.get(field);
    if (field === 'keyHash') readsSealed = true;
    if (!get) throw badRequest(`"${field}" is not a known field selector: only "metadata.name", "metadata.namespace", "keyHash", "needsReview"`);
    if (op === '!=') tests.push((obj) => !get(obj).includes(value));
    else {
      tests.push((obj) => get(obj).includes(value));
      if (field === 'metadata.name') exactName = value;
    }
  }
  const result: FieldSelector = { matcher: (obj) => tests.every((t) => t(obj)) };
  if (exactName !== undefined) result.exactName = exactName;
  if (readsSealed) result.readsSealed = true;
  return result;
}
