/**
 * The kinds of other groups listed for kubectl's defaults (../listed-kinds.ts): a list is always
 * empty, per namespace or across all; a watch, where the kind offers one (`kubectl events -w`),
 * sends nothing but is a watch like any other (watch-connection.ts: a place under the limits, ended
 * with its key); a get is 404; every other verb is 405.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { methodNotAllowed, notFound } from '../../api/errors.js';
import type { Store } from '../../store/types.js';
import { negotiate } from '../content.js';
import { groupVersionOf, listedKinds, type ListedKind } from '../listed-kinds.js';
import { readQuery, type Query } from '../query.js';
import { send } from '../reply.js';
import { emptyWatch } from '../watch/empty-watch.js';
import { serveWatch } from '../watch/watch-connection.js';
import type { WatchHub } from '../watch/watch-hub.js';

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

type Route = { Params: { name?: string }; Querystring: Query };
type Req = FastifyRequest<Route>;

export function registerListedKindRoutes(app: FastifyInstance, prefix: string, servedGroup: string, store: Store, watches: WatchHub): void {
  const refuse = (verb: string, k: ListedKind) =>
    methodNotAllowed(verb, `${k.resource}: this server serves only ${servedGroup}; ${k.kind} is listed so kubectl's defaults work`);

  const list = (k: ListedKind) => async (req: Req, reply: FastifyReply) => {
    if (req.method !== 'GET') throw refuse(req.method, k);
    const q = readQuery(req.query);
    negotiate(req.headers.accept, false);
    if (q.watch && !k.verbs.includes('watch')) throw refuse('watch', k);
    if (q.watch) {
      // No rights of this API to keep: the key alone is checked, nothing is ever sent to fail.
      return serveWatch(req, reply, watches, { resource: undefined, timeoutSeconds: q.timeoutSeconds, open: emptyWatch, encode: (e) => `${JSON.stringify(e)}\n`, apiError: (err) => err });
    }
    const revision = String(await store.currentRevision());
    return send(req, reply, 200, { kind: `${k.kind}List`, apiVersion: groupVersionOf(k.group), metadata: { resourceVersion: revision }, items: [] });
  };
  const item = (k: ListedKind) => async (req: Req) => {
    if (req.method !== 'GET' || !k.verbs.includes('get')) throw refuse(req.method, k);
    throw notFound(k, req.params.name!);
  };

  // Only GET is served, so any other method is refused before its body is read (after the key).
  const readsOnly = (k: ListedKind) => async (req: Req) => {
    if (req.method !== 'GET') throw refuse(req.method, k);
  };

  for (const k of listedKinds) {
    const base = k.group === '' ? `${prefix}/api/v1` : `${prefix}/apis/${k.group}/v1`;
    const scoped = k.namespaced ? `${base}/namespaces/:namespace/${k.resource}` : `${base}/${k.resource}`;
    // A namespaced kind is also listed across all namespaces, as `kubectl events -A` asks.
    const lists = k.namespaced ? [scoped, `${base}/${k.resource}`] : [scoped];
    for (const url of lists) app.route<Route>({ method: methods, url, onRequest: readsOnly(k), handler: list(k) });
    app.route<Route>({ method: methods, url: `${scoped}/:name`, onRequest: readsOnly(k), handler: item(k) });
  }
}
