/** JSON with object keys sorted and undefined members dropped: equal values give equal text. */
import { setField } from './types.js';

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) setField(out, key, sortKeys(v));
  }
  return out;
}

/** The canonical text of a JSON value: how the store recognizes a no-op write and field sets fingerprint values. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value ?? null));
}
