/**
 * Validation ratcheting, as kube-apiserver's for custom resources (KEP-4008): an update is not
 * refused for a value it leaves as it was. An object stored in a shape the rules now refuse (a
 * restore, a hand edit, a rule tightened since) can then still be changed elsewhere, disabled
 * above all: a leak report's disabling patch was refused for a field it never touched, and the
 * leaked key kept working. A changed value is judged in full, so nothing invalid is ever added.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FieldError } from './field-errors.js';
import type { KubeObject } from './types.js';

/**
 * Where an error's value is compared: its field up to the first list item or map key (`spec.groups[2]`
 * compares `spec.groups`, `metadata.labels` all the labels). Items are not matched across a list
 * (kube matches those of map and set lists by their keys): a list is unchanged when all of it is.
 * A missing field is compared at the object it is missing from, as kube's `required` belongs to
 * the object: unchanged, it lacked the field as stored too.
 */
function comparedPath(e: FieldError): string[] | undefined {
  const head = e.field.split('[', 1)[0]!;
  if (head === '' || head.startsWith('<')) return undefined;
  const path = head.split('.');
  if (e.type === 'Required' && head === e.field) path.pop();
  return path.length > 0 ? path : undefined;
}

function at(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const segment of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, segment)) return undefined;
    cur = (cur as Record<string, unknown>)[segment];
  }
  return cur;
}

/** The errors of values `next` changed from `old` (every error when there is no old). */
export function ratcheted(errs: FieldError[], next: KubeObject, old: KubeObject | undefined): FieldError[] {
  if (!old || errs.length === 0) return errs;
  return errs.filter((e) => {
    const path = comparedPath(e);
    if (!path) return true;
    const was = at(old, path);
    return was === undefined || !isDeepStrictEqual(at(next, path), was);
  });
}
