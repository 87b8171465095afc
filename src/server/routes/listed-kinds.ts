/**
 * The kinds of other groups listed for kubectl's defaults (../listed-kinds.ts): a list is always
 * empty, per namespace or across all; a watch, where the kind offers one (`kubectl events -w`),
 * sends nothing; a get is 404; every other verb is 405.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { methodNotAllowed, notFound } from '../../api/errors.js';
import type { Store } from '../../store/types.js';
import { negotiate } from '../content.js';
import { groupVersionOf, listedKinds, type ListedKind } from '../listed-kinds.js';
import { readQuery, type Query } from '../query.js';
import { send } from '../reply.js';

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

type Route = { Params: { name?: string }; Querystring: Query };
type Req = FastifyRequest<Route>;

export function registerListedKindRoutes(app: FastifyInstance, prefix: string, servedGroup: string, store: Store): void {
  const watching = new Set<NodeJS.WritableStream>();
  // Open watches would otherwise hold the server open until their timeouts.
  app.addHook('preClose', async () => {
    for (const res of watching) res.end();
  });
  const refuse = (verb: string, k: ListedKind) =>
    methodNotAllowed(verb, `${k.resource}: this server serves only ${servedGroup}; ${k.kind} is listed so kubectl's defaults work`);

  const list = (k: ListedKind) => async (req: Req, reply: FastifyReply) => {
    if (req.method !== 'GET') throw refuse(req.method, k);
    const q = readQuery(req.query);
    negotiate(req.headers.accept, false);
    if (q.watch && !k.verbs.includes('watch')) throw refuse('watch', k);
    const revision = String(await store.currentRevision());
    if (!q.watch) return send(req, reply, 200, { kind: `${k.kind}List`, apiVersion: groupVersionOf(k.group), metadata: { resourceVersion: revision }, items: [] });
    // A watch of nothing: open until its timeout or until the client leaves.
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    watching.add(res);
    const timer = setTimeout(() => res.end(), (q.timeoutSeconds ?? 1800) * 1000);
    timer.unref();
    res.on('close', () => {
      clearTimeout(timer);
      watching.delete(res);
    });
  };
  const item = (k: ListedKind) => async (req: Req) => {
    if (req.method !== 'GET' || !k.verbs.includes('get')) throw refuse(req.method, k);
    throw notFound(k, req.params.name!);
  };

  for (const k of listedKinds) {
    const base = k.group === '' ? `${prefix}/api/v1` : `${prefix}/apis/${k.group}/v1`;
    const scoped = k.namespaced ? `${base}/namespaces/:namespace/${k.resource}` : `${base}/${k.resource}`;
    // A namespaced kind is also listed across all namespaces, as `kubectl events -A` asks.
    const lists = k.namespaced ? [scoped, `${base}/${k.resource}`] : [scoped];
    for (const url of lists) app.route<Route>({ method: methods, url, handler: list(k) });
    app.route<Route>({ method: methods, url: `${scoped}/:name`, handler: item(k) });
  }
}
