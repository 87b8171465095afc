/**
 * The core group's `events`, the one core resource served: always empty, as this server records no
 * Events. `kubectl events` lists them (per namespace, or with -A across all) and may watch them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../api/errors.js';
import type { Store } from '../../store/types.js';
import { negotiate } from '../content.js';
import { readQuery, type Query } from '../query.js';
import { send } from '../reply.js';

const events = { group: '', resource: 'events' };

export function registerCoreRoutes(app: FastifyInstance, prefix: string, store: Store): void {
  const watching = new Set<NodeJS.WritableStream>();
  // Open watches would otherwise hold the server open until their timeouts.
  app.addHook('preClose', async () => {
    for (const res of watching) res.end();
  });
  const list = async (req: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply) => {
    const q = readQuery(req.query);
    negotiate(req.headers.accept, false);
    const revision = String(await store.currentRevision());
    if (!q.watch) return send(req, reply, 200, { kind: 'EventList', apiVersion: 'v1', metadata: { resourceVersion: revision }, items: [] });
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
  app.get(`${prefix}/api/v1/events`, list);
  app.get(`${prefix}/api/v1/namespaces/:namespace/events`, list);
  app.get<{ Params: { name: string } }>(`${prefix}/api/v1/namespaces/:namespace/events/:name`, (req) => {
    throw notFound(events, req.params.name);
  });
}
