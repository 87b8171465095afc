/**
 * Authorization of a write's attributes (verb, resource, subresource, name) before its body is read,
 * as kube-apiserver authorizes before decoding: a caller who cannot make the request gets its 403
 * at once, whatever body it is sending, and the server neither buffers nor decodes that body. Rights
 * here rest on objects (a Team's owner and access rules, a key's user), so a named object is judged
 * as it is now (read from the cache), or as absent, exactly as the route judges it after a 404 or
 * 409 (resources.ts, concealing), so the answer does not tell whether it exists. A create is judged
 * by whether the caller could create any such object (a key is judged by its content, unknown
 * yet); admission judges the body later, once it is read (guard.ts).
 */
import { methodNotAllowed, pathNotFound } from '../../api/errors.js';
import type { KubeObject } from '../../api/types.js';
import { ApiError } from '../../api/errors.js';
import { roleVerbs, type Verb } from '../../auth/roles.js';
import type { ResourceRegistry } from '../../registry/resource-registry.js';
import type { AuthContext, Guard } from './guard.js';

/** What a request with a body asks, by route and method; undefined for reads (authorized in the route). */
export function writeAttributes(method: string, name: string | undefined, subresource: string | undefined): { verb: Verb; subresource?: string } | undefined {
  if (method === 'GET' || method === 'HEAD') return undefined;
  if (!name) return method === 'POST' ? { verb: 'create' } : method === 'DELETE' ? { verb: 'deletecollection' } : undefined;
  if (subresource === 'rotation') return method === 'POST' ? { verb: 'update', subresource } : undefined;
  const verb = method === 'PUT' ? 'update' : method === 'PATCH' ? 'patch' : method === 'DELETE' && !subresource ? 'delete' : undefined;
  return verb ? { verb, ...(subresource ? { subresource } : {}) } : undefined;
}

/** Whether `guard`'s caller may create some object of its resource: keys are judged by their content, which is not read yet. */
function mayCreateSome(auth: AuthContext, guard: Guard, resource: string): boolean {
  const who = guard.who;
  if (resource === 'teams') return roleVerbs(who.clusterRoles, 'teams').has('create');
  if (roleVerbs(who.clusterRoles, resource as 'ownedaccesskeys' | 'federatedcredentials').has('create') || who.user !== undefined) return true;
  // A team's keys, for whoever may update the team (auth/authorize.ts keyGrants).
  for (const team of auth.teams.referencing(who.user, who.teams)) {
    if (auth.authorizer.teamVerbs(who, auth.teams.get(team)).has('update')) return true;
  }
  return false;
}

/**
 * Throws the 403 (or 404, 405) a write gets before its body is read. Passing says only that the
 * request may go on: the route and admission still judge the body.
 */
export async function authorizeBeforeBody(auth: AuthContext, guard: Guard, r: ResourceRegistry, method: string, name: string | undefined, subresource: string | undefined): Promise<void> {
  const plural = r.info.plural;
  if (subresource !== undefined && !(subresource === 'status' || (subresource === 'rotation' && plural === 'ownedaccesskeys') || (subresource === 'accesskeys' && plural === 'teams') || (subresource === 'approval' && plural === 'accessrequests'))) throw pathNotFound();
  if (subresource === 'accesskeys' && method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(method, `teams/${name}/accesskeys`);
  const asked = writeAttributes(method, name, subresource);
  if (!asked) {
    // A method that asks no verb of this path (PUT of a collection, POST of a named object) is
    // refused now, as its route would refuse it, rather than after its body has been read.
    if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(method, [plural, name, subresource].filter(Boolean).join('/'));
    return;
  }
  const { verb } = asked;
  if (subresource === 'rotation') guard.scopeOneOf(name!, [['update', 'rotation'], ['update'], ['patch']]);
  else guard.scope(verb, name, asked.subresource);
  if (verb === 'deletecollection') return guard.requireEverywhere(verb);
  if (guard.holdsEverywhere(verb)) return;
  if (!name) {
    if (mayCreateSome(auth, guard, plural)) return;
    throw auth.authorizer.forbidden(guard.who, verb, plural);
  }
  // A rotation is judged as the update of the key it is (resources.ts, rotation).
  const judged = subresource === 'rotation' ? undefined : asked.subresource;
  let current: KubeObject | undefined;
  try {
    current = await r.get(name);
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 404)) throw err;
  }
  if (current) return guard.check(verb, current, judged);
  // Absent: a server-side apply (or a PUT) may create it, judged by its content once read; a caller
  // who could create no such object gets the 403 of the absent object, as it would after the 404.
  if ((method === 'PATCH' || method === 'PUT') && !judged && mayCreateSome(auth, guard, plural)) return;
  guard.check(verb, { apiVersion: r.info.apiVersion, kind: r.info.kind, metadata: { name } }, judged);
}
