/** The resource endpoints: collection, item, status subresource, and teams/<name>/accesskeys. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { methodNotAllowed, pathNotFound, unsupportedMediaType } from '../../api/errors.js';
import type { KubeObject } from '../../api/types.js';
import type { Registry } from '../../registry/registry.js';
import type { ResourceRegistry } from '../../registry/resource-registry.js';
import { bodyTypeOf, parseBody } from '../content.js';
import { deleteOptions, readQuery, writeQuery, type Query } from '../query.js';
import { send, sendReadable } from '../reply.js';
import { serveWatch, type WatchHub } from './watch.js';

interface Params {
  resource: string;
  name?: string;
  subresource?: string;
}

type Request = FastifyRequest<{ Params: Params; Querystring: Query; Body: Buffer | undefined }>;

const objectBody = (req: Request) => parseBody(req.body, bodyTypeOf(req.headers['content-type'], ['json', 'yaml']));

async function collection(req: Request, reply: FastifyReply, r: ResourceRegistry, watches: WatchHub) {
  switch (req.method) {
    case 'GET': {
      const q = readQuery(req.query);
      if (q.watch) return serveWatch(req, reply, r, q, watches);
      return sendReadable(req, reply, r.info.kind, await r.list(q), q.includeObject);
    }
    case 'POST': {
      const w = writeQuery(req.query);
      const { object, warnings } = await r.create(objectBody(req), w);
      return send(req, reply, 201, object, warnings);
    }
    case 'DELETE': {
      const body = req.body && req.body.length > 0 ? objectBody(req) : undefined;
      return send(req, reply, 200, await r.deleteCollection(readQuery(req.query), deleteOptions(req.query, body)));
    }
    default:
      throw methodNotAllowed(req.method, `the collection ${r.info.plural}`);
  }
}

async function item(req: Request, reply: FastifyReply, r: ResourceRegistry, name: string) {
  switch (req.method) {
    case 'GET':
      return sendReadable(req, reply, r.info.kind, await r.get(name), readQuery(req.query).includeObject);
    case 'PUT': {
      const { object, warnings } = await r.update(name, objectBody(req), writeQuery(req.query));
      return send(req, reply, 200, object, warnings);
    }
    case 'PATCH':
      return patchItem(req, reply, r, name, undefined);
    case 'DELETE': {
      const body = req.body && req.body.length > 0 ? objectBody(req) : undefined;
      const { object, removed } = await r.delete(name, deleteOptions(req.query, body));
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

async function patchItem(req: Request, reply: FastifyReply, r: ResourceRegistry, name: string, subresource: 'status' | undefined) {
  const type = bodyTypeOf(req.headers['content-type'], ['json-patch', 'merge-patch', 'apply-patch', 'strategic-merge-patch']);
  if (type === 'strategic-merge-patch' || type === 'apply-patch') {
    // Strategic merge needs Go struct tags these kinds do not have; apply arrives with managedFields.
    throw unsupportedMediaType(String(req.headers['content-type']), ['application/json-patch+json', 'application/merge-patch+json']);
  }
  const body = parseBody(req.body, type);
  const { object, warnings } = await r.patch(name, type === 'json-patch' ? 'json' : 'merge', body, {
    ...writeQuery(req.query),
    ...(subresource ? { subresource } : {}),
  });
  return send(req, reply, 200, object, warnings);
}

async function status(req: Request, reply: FastifyReply, r: ResourceRegistry, name: string) {
  switch (req.method) {
    case 'GET':
      return send(req, reply, 200, await r.get(name));
    case 'PUT': {
      const { object, warnings } = await r.update(name, objectBody(req), { ...writeQuery(req.query), subresource: 'status' });
      return send(req, reply, 200, object, warnings);
    }
    case 'PATCH':
      return patchItem(req, reply, r, name, 'status');
    default:
      throw methodNotAllowed(req.method, `${r.info.plural}/${name}/status`);
  }
}

/** GET teams/<name>/accesskeys: the keys whose spec.team is that team. */
async function teamAccessKeys(req: Request, reply: FastifyReply, registry: Registry, name: string) {
  if (req.method !== 'GET') throw methodNotAllowed(req.method, `teams/${name}/accesskeys`);
  await registry.teams.get(name);
  const { items } = await registry.ownedaccesskeys.list();
  const accessKeys = items.filter((k: KubeObject) => (k.spec as { team?: string } | undefined)?.team === name);
  return send(req, reply, 200, { accessKeys });
}

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function registerResourceRoutes(app: FastifyInstance, base: string, registry: Registry, watches: WatchHub): void {
  const resolve = (req: Request) => {
    const r = registry.byPlural(req.params.resource);
    if (!r) throw pathNotFound();
    return r;
  };
  app.route<{ Params: Params; Querystring: Query; Body: Buffer | undefined }>({
    method: [...methods],
    url: `${base}/:resource`,
    handler: (req, reply) => collection(req, reply, resolve(req), watches),
  });
  app.route<{ Params: Params; Querystring: Query; Body: Buffer | undefined }>({
    method: [...methods],
    url: `${base}/:resource/:name`,
    handler: (req, reply) => item(req, reply, resolve(req), req.params.name!),
  });
  app.route<{ Params: Params; Querystring: Query; Body: Buffer | undefined }>({
    method: [...methods],
    url: `${base}/:resource/:name/:subresource`,
    handler: (req, reply) => {
      const r = resolve(req);
      const name = req.params.name!;
      if (req.params.subresource === 'status') return status(req, reply, r, name);
      if (req.params.subresource === 'accesskeys' && r.info.plural === 'teams') return teamAccessKeys(req, reply, registry, name);
      throw pathNotFound();
    },
  });
}
