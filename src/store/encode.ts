/** Canonical encoding: sorted keys, no resourceVersion (the revision is stored beside the value). */
import type { StoredObject } from './types.js';

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}

/**
 * Encodes an object so that equal objects give equal bytes, which is how an update that changes
 * nothing is recognized and skipped.
 */
export function encodeObject(obj: StoredObject): string {
  const { resourceVersion: _rv, ...metadata } = obj.metadata ?? {};
  return JSON.stringify(sortKeys({ ...obj, metadata }));
}

export function decodeObject<T extends StoredObject>(value: string, revision: number): T {
  const obj = JSON.parse(value) as T;
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(revision) };
  return obj;
}
