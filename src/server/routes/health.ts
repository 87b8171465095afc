/** /healthz, /livez, /readyz and /version at the server root; none needs a key (as in kube). */
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/types.js';
import { versionInfo } from '../discovery.js';

export function registerHealthRoutes(app: FastifyInstance, store: Store, packageVersion: string): void {
  const version = JSON.stringify(versionInfo(packageVersion));
  app.get('/version', (_req, reply) => reply.type('application/json').send(version));
  const ok = (_req: unknown, reply: { type(t: string): { send(b: string): unknown } }) => reply.type('text/plain').send('ok');
  app.get('/healthz', ok);
  app.get('/livez', ok);
  // Anyone may ask (no key), and a ping is a database round trip on PostgreSQL: every /readyz asked
  // while one is out shares it, so a flood costs the store one ping at a time, not one each (a
  // review). Not kept after it answers: a store that just failed is unready at the next ask.
  let pinging: Promise<void> | undefined;
  const ping = () =>
    (pinging ??= Promise.resolve()
      .then(() => store.ping())
      .finally(() => {
        pinging = undefined;
      }));
  app.get('/readyz', async (req, reply) => {
    try {
      await ping();
      return reply.type('text/plain').send('ok');
    } catch (err) {
      req.log.warn({ err }, 'readiness check failed');
      return reply.code(503).type('text/plain').send('[-]store failed: the store does not answer or does not take writes (the server log says why)\nreadyz check failed');
    }
  });
}
