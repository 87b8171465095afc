/** /healthz, /livez and /readyz at the server root; none needs a key. */
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/types.js';

export function registerHealthRoutes(app: FastifyInstance, store: Store): void {
  const ok = (_req: unknown, reply: { type(t: string): { send(b: string): unknown } }) => reply.type('text/plain').send('ok');
  app.get('/healthz', ok);
  app.get('/livez', ok);
  app.get('/readyz', async (req, reply) => {
    try {
      await store.ping();
      return reply.type('text/plain').send('ok');
    } catch (err) {
      req.log.warn({ err }, 'readiness check failed');
      return reply.code(503).type('text/plain').send('[-]store failed: the store does not answer\nreadyz check failed');
    }
  });
}
