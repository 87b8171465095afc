/** What scrubHistory does to one stored row, shared by every backend (a worker thread runs it too, so it takes data, not a closure). */
import { encodeObject } from './encode.js';
import type { StoredObject } from './types.js';

/** The encoded object without its top-level `property`; the same string when it has none. */
export function withoutProperty(value: string, property: string): string {
  const obj = JSON.parse(value) as Record<string, unknown>;
  if (!(property in obj)) return value;
  delete obj[property];
  return encodeObject(obj as StoredObject);
}
