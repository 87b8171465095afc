/** The resource endpoints: collection, item, status subresource, ownedaccesskeys/<name>/rotation, and teams/<name>/accesskeys. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, invalid, methodNotAllowed, pathNotFound, unsupportedMediaType } from '../../api/errors.js';
import { earlyMetadataErrors } from '../../api/object-meta.js';
import { isJsonMap } from '../../api/types.js';
import type { KubeObject } from '../../api/types.js';
import type { Registry } from '../../registry/registry.js';
import type { ResourceRegistry } from '../../registry/resource-registry.js';
import type { Requester } from '../../registry/write-observer.js';
import { seesEverything } from '../../auth/authorize.js';
import type { Verb } from '../../auth/roles.js';
import { bodyTypeOf, negotiate, objectBodies, parseBody } from '../content.js';
import { bodiesBeforeBody, subresourceServes, whyNotServed } from './resource-methods.js';
import { isServerFieldManager } from '../../api/key-notices.js';
import { duplicateFields } from '../duplicate-fields.js';
import { Guard, identityOf, type AuthContext } from '../auth/guard.js';
import { valueSetterOf } from '../../auth/identity.js';
import { standingOf } from '../../auth/temporary-access.js';
import { authorizeBeforeBody } from '../auth/before-body.js';
import { deleteOptions, readQuery, writeQuery, type Query } from '../query.js';
import { send, sendReadable } from '../reply.js';
import { auditIdOf } from '../response-conventions.js';
import type { WatchHub } from '../watch/watch-hub.js';
import { serveResourceWatch } from './watch.js';
import { decideRequest } from './access-request-approval.js';
import { clientOf } from '../client-address.js';

interface Params {
  resource: string;
  name?: string;
  subresource?: string;
}

type Request = FastifyRequest<{ Params: Params; Querystring: Query; Body: Buffer | undefined }>;

const objectBody = (req: Request) => parseBody(req.body, bodyTypeOf(req.headers['content-type'], objectBodies));

/** Refuses at once a body no write can accept (annotations past kube's limit), before the work that grows with its fields. */
function bounded(r: ResourceRegistry, body: unknown, name: string | undefined): unknown {
  const errs = earlyMetadataErrors(body);
  if (errs.length === 0) return body;
  const named = isJsonMap(body) && isJsonMap(body.metadata) && typeof body.metadata.name === 'string' ? body.metadata.name : '';
  throw invalid({ group: r.info.group, kind: r.info.kind }, name ?? named, errs);
}

/** An object body and the keys it gives twice, which fieldValidation judges in the registry. */
function objectWrite(req: Request, r: ResourceRegistry) {
  const type = bodyTypeOf(req.headers['content-type'], objectBodies);
  return { body: bounded(r, parseBody(req.body, type), req.params.name), duplicateFields: duplicateFields(req.body, type) };
}

/** The write options of a request; its manager is fieldManager, else the User-Agent up to its first "/". */
function writeOptions(req: Request, patch?: 'json' | 'merge') {
  const w = writeQuery(req.query, optionsKind(req.method), patch);
  return { ...w, fieldManager: w.fieldManager ?? agentOf(req), requester: requesterOf(req), ...signInOf(req) };
}

/**
 * Where a key the request writes comes from: the Login key (or minted key) the caller's key is or
 * is tied to, which a key it sets is tied to; and who sets its value (api/key-types.ts).
 */
function signInOf(req: Request) {
  const who = identityOf(req);
  return { ...(who.signIn ? { signIn: who.signIn } : {}), valueSetBy: valueSetterOf(who, standingOf(who).clusterRoles) };
}

const optionsKind = (method: string) => (method === 'POST' ? 'CreateOptions' : method === 'PUT' ? 'UpdateOptions' : 'PatchOptions');

/** The manager a User-Agent names (kube's default); never one of the server's own (key-notices.ts). */
const agentOf = (req: Request) => {
  const agent = req.headers['user-agent']?.split('/')[0]?.trim() || 'unknown';
  return isServerFieldManager(agent) ? 'unknown' : agent;
};

/** Who sent the request, for the audit trail the registry's write observer feeds. */
function requesterOf(req: Request): Requester {
  const who = identityOf(req);
  const agent = req.headers['user-agent'];
  const sent = { ...(agent ? { userAgent: agent } : {}), ...(who.previousValue ? { previousValue: true } : {}), auditID: auditIdOf(req) };
  const by = who.impersonation?.by;
  if (!by) return { username: who.name, keyName: who.keyName, ...(who.groups.length ? { groups: who.groups } : {}), ...(who.job ? { job: who.job } : {}), sourceIP: req.ip, ...sent };
  // As kube's audit: `user` is who sent the request, `impersonatedUser` whom it acted as.
  const { uid, extra } = who.impersonation!;
  const impersonatedUser = { username: who.name, ...(uid !== undefined ? { uid } : {}), ...(who.groups.length ? { groups: who.groups } : {}), ...(extra ? { extra } : {}) };
  return { username: by.name, keyName: by.keyName, ...(by.groups.length ? { groups: by.groups } : {}), ...(by.job ? { job: by.job } : {}), sourceIP: req.ip, ...sent, impersonatedUser };
}

async function collection(req: Request, reply: FastifyReply, r: ResourceRegistry, guard: Guard, watches: WatchHub) {
  switch (req.method) {
    case 'GET': {
      const q = readQuery(req.query);
      guard.scope(q.watch ? 'watch' : 'list');
      // A reader who sees every object has no filter: the registry then also serves it past
      // revisions of objects deleted or replaced since, which it keeps from anyone else.
      const seen = guard.filter();
      const filter = seen === seesEverything ? undefined : seen;
      if (q.watch) return serveResourceWatch(req, reply, r, q, watches, filter);
      if (negotiate(req.headers.accept, 'list') === 'json') {
        const json = await r.listJson({ ...q, ...(filter ? { filter } : {}) }, !filter);
        if (json !== undefined) return reply.code(200).type('application/json').send(json);
      }
      return sendReadable(req, reply, r.info.kind, await r.list({ ...q, ...(filter ? { filter } : {}) }), q.includeObject);
    }
    case 'POST': {
      guard.scope('create');
      const { body, duplicateFields } = objectWrite(req, r);
      // An AccessRequest without spec.user asks for the requester (kube's defaulting of a field from the caller).
      if (r.info.plural === 'accessrequests' && isJsonMap(body) && isJsonMap(body.spec) && body.spec.user === undefined && guard.who.user !== undefined) body.spec.user = guard.who.user;
      const { object, warnings } = await guard.probing(() => r.create(body, { ...writeOptions(req), duplicateFields, admit: guard.admit() }));
      return send(req, reply, 201, object, warnings);
    }
    case 'DELETE': {
      guard.scope('deletecollection');
      guard.requireEverywhere('deletecollection');
      const body = req.body && req.body.length > 0 ? objectBody(req) : undefined;
      return send(req, reply, 200, await r.deleteCollection(readQuery(req.query), { ...deleteOptions(req.query, body), fieldManager: agentOf(req), requester: requesterOf(req), admit: guard.admit() }));
    }
    default:
      throw methodNotAllowed(req.method, `the collection ${r.info.plural}`);
  }
}

/** The object `name` as a caller's rights are judged on it when it does not exist. */
const absent = (r: ResourceRegistry, name: string): KubeObject => ({ apiVersion: r.info.apiVersion, kind: r.info.kind, metadata: { name } });

/**
 * Runs a write to one object. Its 404 says whether the object exists, its 409 that it does (and a
 * failed precondition its uid and resourceVersion), both decided before admission: a caller who
 * may not `verb` the object as it is (or would be, absent) gets the 403 it gets either way.
 */
async function concealing<T>(r: ResourceRegistry, guard: Guard, verb: Verb, name: string, subresource: 'status' | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof ApiError) || (err.code !== 404 && err.code !== 409) || guard.holdsEverywhere(verb)) throw err;
    let current: KubeObject;
    try {
      current = await r.get(name);
    } catch (missing) {
      if (!(missing instanceof ApiError && missing.code === 404)) throw missing;
      current = absent(r, name);
    }
    guard.check(verb, current, subresource);
    throw err;
  }
}

/**
 * Reads one object the caller may see. A missing object is 404 only to callers who could read it
 * if it existed; others get the same 403 either way, so existence does not leak.
 */
async function readable(r: ResourceRegistry, guard: Guard, name: string, subresource?: string): Promise<{ object: () => KubeObject; json?: Buffer }> {
  guard.scope('get', name, subresource);
  let found: { object: () => KubeObject; json?: Buffer };
  try {
    const cached = await r.getJson(name);
    if (cached) found = { object: cached.object, json: cached.json };
    else {
      const object = await r.get(name);
      found = { object: () => object };
    }
  } catch (err) {
    if (err instanceof ApiError && err.code === 404 && !guard.holdsEverywhere('get')) {
      guard.check('get', absent(r, name), subresource);
    }
    throw err;
  }
  // A caller whose list filter passes every object (the authorizer's own verdict) may get this one
  // without a look inside it: the cached JSON is sent undecoded.
  if (subresource !== undefined || guard.filter() !== seesEverything) guard.check('get', found.object(), subresource);
  return found;
}

async function item(req: Request, reply: FastifyReply, r: ResourceRegistry, guard: Guard, name: string) {
  switch (req.method) {
    case 'GET': {
      const q = readQuery(req.query);
      const { object, json } = await readable(r, guard, name);
      // A GET at resourceVersion N reads a state not older than N: 504 when the store is behind it.
      await r.assertReached(q.resourceVersion);
      return sendReadable(req, reply, r.info.kind, object, q.includeObject, json);
    }
    case 'PUT': {
      guard.scope('update', name);
      const { body, duplicateFields } = objectWrite(req, r);
      const { object, warnings } = await concealing(r, guard, 'update', name, undefined, () =>
        guard.probing(() => r.update(name, body, { ...writeOptions(req), duplicateFields, admit: guard.admit() })),
      );
      return send(req, reply, 200, object, warnings);
    }
    case 'PATCH':
      return patchItem(req, reply, r, guard, name, undefined);
    case 'DELETE': {
      guard.scope('delete', name);
      const body = req.body && req.body.length > 0 ? objectBody(req) : undefined;
      const { object, removed } = await concealing(r, guard, 'delete', name, undefined, () =>
        r.delete(name, { ...deleteOptions(req.query, body), fieldManager: agentOf(req), requester: requesterOf(req), admit: guard.admit() }),
      );
      if (!removed) return send(req, reply, 200, object);
      const { group, plural } = r.info;
      return send(req, reply, 200, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name, group, kind: plural, uid: object.metadata.uid },
      });
    }
    default:
      throw methodNotAllowed(req.method, `${r.info.plural}/${name}`);
  }
}

async function patchItem(req: Request, reply: FastifyReply, r: ResourceRegistry, guard: Guard, name: string, subresource: 'status' | undefined) {
  guard.scope('patch', name, subresource);
  const type = bodyTypeOf(req.headers['content-type'], ['json-patch', 'merge-patch', 'apply-patch', 'strategic-merge-patch']);
  const patchTypes = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];
  // Strategic merge needs Go struct metadata these kinds do not have.
  if (type === 'strategic-merge-patch') throw unsupportedMediaType(String(req.headers['content-type']), patchTypes);
  const body = type === 'json-patch' ? parseBody(req.body, type) : bounded(r, parseBody(req.body, type), name);
  const duplicates = duplicateFields(req.body, type);
  if (type === 'apply-patch') {
    if (subresource) throw unsupportedMediaType(String(req.headers['content-type']), patchTypes.slice(0, 2));
    const w = writeQuery(req.query, 'PatchOptions', 'apply');
    const { object, warnings, created } = await concealing(r, guard, 'patch', name, undefined, () =>
      guard.probing(() => r.apply(name, body, { ...w, duplicateFields: duplicates, requester: requesterOf(req), ...signInOf(req), admit: guard.admit() })),
    );
    return send(req, reply, created ? 201 : 200, object, warnings);
  }
  const kind = type === 'json-patch' ? 'json' : 'merge';
  const options = writeOptions(req, kind);
  const { object, warnings } = await concealing(r, guard, 'patch', name, subresource, () =>
    guard.probing(() =>
      r.patch(name, kind, body, {
        ...options,
        duplicateFields: duplicates,
        ...(subresource ? { subresource } : {}),
        admit: guard.admit(),
      }),
    ),
  );
  return send(req, reply, 200, object, warnings);
}

async function status(req: Request, reply: FastifyReply, r: ResourceRegistry, guard: Guard, name: string) {
  switch (req.method) {
    case 'GET':
      return send(req, reply, 200, (await readable(r, guard, name, 'status')).object());
    case 'PUT': {
      guard.scope('update', name, 'status');
      const { body, duplicateFields } = objectWrite(req, r);
      const { object, warnings } = await concealing(r, guard, 'update', name, 'status', () =>
        r.update(name, body, { ...writeOptions(req), duplicateFields, subresource: 'status', admit: guard.admit() }),
      );
      return send(req, reply, 200, object, warnings);
    }
    case 'PATCH':
      return patchItem(req, reply, r, guard, name, 'status');
    default:
      throw methodNotAllowed(req.method, `${r.info.plural}/${name}/status`);
  }
}

/**
 * POST ownedaccesskeys/<name>/rotation: a KeyRotation body (src/api/key-rotation.ts). Judged as
 * what it is, an update of the key that sets its value: the scope must allow that (or name the
 * rotation subresource), and admission runs as for a PUT of spec.key.
 */
async function rotation(req: Request, reply: FastifyReply, r: ResourceRegistry, guard: Guard, name: string) {
  if (req.method !== 'POST') throw methodNotAllowed(req.method, `${r.info.plural}/${name}/rotation`);
  guard.scopeOneOf(name, [['update', 'rotation'], ['update'], ['patch']]);
  const { body, duplicateFields } = objectWrite(req, r);
  const { object, warnings, created } = await concealing(r, guard, 'update', name, undefined, () =>
    guard.probing(() => r.rotate(name, body, { ...writeOptions(req), duplicateFields, admit: guard.admit() })),
  );
  return send(req, reply, created ? 201 : 200, object, warnings);
}

/** GET teams/<name>/accesskeys: the keys whose spec.team is that team, of those the caller may see. */
async function teamAccessKeys(req: Request, reply: FastifyReply, registry: Registry, auth: AuthContext, name: string) {
  if (req.method !== 'GET') throw methodNotAllowed(req.method, `teams/${name}/accesskeys`);
  const who = identityOf(req);
  await readable(registry.teams, new Guard(auth, who, 'teams'), name, 'accesskeys');
  const keys = new Guard(auth, who, 'ownedaccesskeys');
  keys.scope('list');
  const visible = keys.filter();
  const items = (await registry.ownedaccesskeys.byField('team', name)).filter(visible);
  return send(req, reply, 200, { accessKeys: items });
}

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function registerResourceRoutes(app: FastifyInstance, base: string, registry: Registry, watches: WatchHub, auth: AuthContext): void {
  const resolve = (req: Request) => {
    const r = registry.byPlural(req.params.resource);
    if (!r) throw pathNotFound();
    return r;
  };
  const guardOf = (req: Request, r: ResourceRegistry) => new Guard(auth, identityOf(req), r.info.plural, clientOf(req));
  // After authentication (request-gate.ts) and before the body is read: a method the subresource
  // does not serve (405), then the write's attributes. A review found a PATCH of an approval read
  // a body of up to 3 MiB before its 405.
  const beforeBody = async (req: Request) => {
    const r = resolve(req);
    const sub = req.params.subresource;
    const served = sub === undefined ? undefined : subresourceServes(r.info.plural, sub);
    if (sub !== undefined && !served) throw pathNotFound();
    if (served && !served.includes(req.method)) throw methodNotAllowed(req.method, `${r.info.plural}/${req.params.name}/${sub}`, whyNotServed(r.info.plural, sub!));
    await authorizeBeforeBody(auth, guardOf(req, r), r, req.method, req.params.name, sub);
    // Then the media type, which the headers decide too (a review found 3 MiB read before a 415).
    const accepted = bodiesBeforeBody(req.method, req.headers, req.params.name, sub);
    if (accepted) bodyTypeOf(req.headers['content-type'], accepted);
  };
  const route = (url: string, handler: (req: Request, reply: FastifyReply) => Promise<unknown>) =>
    app.route<{ Params: Params; Querystring: Query; Body: Buffer | undefined }>({ method: [...methods], url, config: { yamlBody: true }, onRequest: beforeBody, handler });
  route(`${base}/:resource`, (req, reply) => {
    const r = resolve(req);
    return collection(req, reply, r, guardOf(req, r), watches);
  });
  route(`${base}/:resource/:name`, (req, reply) => {
    const r = resolve(req);
    return item(req, reply, r, guardOf(req, r), req.params.name!);
  });
  route(`${base}/:resource/:name/:subresource`, async (req, reply) => {
    const r = resolve(req);
    const name = req.params.name!;
    if (req.params.subresource === 'status') return status(req, reply, r, guardOf(req, r), name);
    if (req.params.subresource === 'accesskeys' && r.info.plural === 'teams') return teamAccessKeys(req, reply, registry, auth, name);
    if (req.params.subresource === 'rotation' && r.info.plural === 'ownedaccesskeys') return rotation(req, reply, r, guardOf(req, r), name);
    if (req.params.subresource === 'approval' && r.info.plural === 'accessrequests') {
      if (req.method !== 'PUT') throw methodNotAllowed(req.method, `accessrequests/${name}/approval`);
      const guard = guardOf(req, r);
      guard.scope('update', name, 'approval');
      const w = writeQuery(req.query, 'UpdateOptions');
      const object = await concealing(r, guard, 'update', name, undefined, () => decideRequest(r, auth.teams, auth.authorizer, auth.authenticator, guard, name, objectBody(req), { fieldManager: w.fieldManager ?? agentOf(req), now: auth.now ?? (() => new Date()), ...(w.dryRun ? { dryRun: true } : {}) }));
      return send(req, reply, 200, object);
    }
    throw pathNotFound();
  });
}
