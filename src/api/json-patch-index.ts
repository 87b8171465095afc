/**
 * Array indices in JSON patch paths, read as kube-apiserver's json-patch (evanphx/json-patch v4)
 * reads them: Go's strconv.Atoi, so `01`, `+1` and `-1` (from the end) name an element in every
 * operation alike, and `-` (past the end) only for `add`. fast-json-patch reads `01` one way in
 * `add` and another in `replace`, so each path is rewritten to plain indices before it applies.
 */
import { isJsonMap } from './types.js';

/** Go's Atoi: an optional sign, then decimal digits (leading zeros allowed). */
const atoi = /^[+-]?\d+$/;

const unescape = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/** Thrown when an index names no element: the operation fails, as kube's does. */
export class InvalidIndex extends Error {}

/**
 * The pointer with each array index in its plain form, resolved against doc. `endOpen`: the last
 * segment may name the position just past the end (an `add`), so a negative one counts from there.
 */
export function plainIndices(doc: unknown, pointer: string, endOpen: boolean): string {
  if (pointer === '') return pointer;
  const segments = pointer.split('/');
  let node = doc;
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    if (Array.isArray(node)) {
      if (!atoi.test(segment)) {
        node = undefined;
        continue;
      }
      const size = node.length + (last && endOpen ? 1 : 0);
      let index = Number(segment);
      if (index < 0) index += size;
      if (index < 0 || index >= size || !Number.isSafeInteger(index)) throw new InvalidIndex(`no element ${segment}`);
      segments[i] = String(index);
      node = node[index];
    } else if (isJsonMap(node)) {
      const key = unescape(segment);
      node = Object.hasOwn(node, key) ? node[key] : undefined;
    } else node = undefined;
  }
  return segments.join('/');
}
