/** How every reader of a stored object takes its ownerReferences. */
import { isJsonMap, type OwnerReference } from './types.js';

const names = ['apiVersion', 'kind', 'name', 'uid'] as const;
const isReference = (r: unknown): r is OwnerReference => isJsonMap(r) && names.every((k) => typeof r[k] === 'string');

/**
 * An object's owner references: the list when each item names its owner's apiVersion, kind, name
 * and uid as strings, else none. The API refuses any other shape, but the store can hold one
 * written past it (a restore, a hand edit). Such an object names no owner anyone can check, so
 * the collector leaves it alone, as it does one owned by a kind this server does not serve. Read
 * as it is, one such object failed every pass of the collector, for good, and every
 * authentication of a team key that held it.
 */
export function ownerReferencesOf(meta: { ownerReferences?: unknown } | undefined): OwnerReference[] {
  const refs = meta?.ownerReferences;
  return Array.isArray(refs) && refs.every(isReference) ? refs : [];
}
