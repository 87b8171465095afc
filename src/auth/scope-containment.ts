/**
 * Whether one key scope is within another. A scope is a union of allowances (roles, projects,
 * spaces, virtual clusters, clusters, rules, the cli flag), so a scope whose every entry appears in
 * the other allows nothing the other does not. An empty scope allows everything.
 */
import { isDeepStrictEqual } from 'node:util';
import type { OwnedAccessKeySpec } from '../api/types.js';
import { hasScope } from './grants.js';

type Scope = NonNullable<OwnedAccessKeySpec['scope']>;

/** True when everything `inner` allows, `outer` allows too. */
export function scopeWithin(inner: Scope | undefined, outer: Scope | undefined): boolean {
  if (!hasScope({ scope: outer })) return true;
  if (!hasScope({ scope: inner })) return false;
  for (const [field, value] of Object.entries(inner!) as [keyof Scope, unknown][]) {
    const theirs = outer![field];
    if (Array.isArray(value)) {
      const list = Array.isArray(theirs) ? (theirs as unknown[]) : [];
      if (!value.every((v) => list.some((w) => isDeepStrictEqual(v, w)))) return false;
    } else if (value !== undefined && value !== false && value !== '' && !isDeepStrictEqual(value, theirs)) {
      return false;
    }
  }
  return true;
}
