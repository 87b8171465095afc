/**
 * How powerful one access entry is, for ordering: its own module, so the report writers (loaded by
 * every command) order lines without loading the access change's computation (the authorizer,
 * JSON patch) until a plan needs it.
 */
import type { AccessEntry } from './access-change.js';

const writes = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Most powerful first: management-admin, then writes on keys and other roles, writes on Teams, reads. */
export function rank(e: Pick<AccessEntry, 'resource' | 'name' | 'verb'>): number {
  if (e.resource === 'clusterroles') return e.name === 'management-admin' ? 0 : 1;
  if (e.resource === 'ownedaccesskeys' && writes.has(e.verb)) return 1;
  if (writes.has(e.verb)) return 2;
  return 3;
}
