/** Canonical encoding: sorted keys, no resourceVersion (the revision is stored beside the value). */
import { canonicalJson } from '../api/canonical-json.js';
import type { StoredObject } from './types.js';

/**
 * Encodes an object so that equal objects give equal bytes, which is how an update that changes
 * nothing is recognized and skipped.
 */
export function encodeObject(obj: StoredObject): string {
  const { resourceVersion: _rv, ...metadata } = obj.metadata ?? {};
  return canonicalJson({ ...obj, metadata });
}

export function decodeObject<T extends StoredObject>(value: string, revision: number): T {
  const obj = JSON.parse(value) as T;
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(revision) };
  return obj;
}
