/** /healthz, /livez, /readyz and /version at the server root; none needs a key (as in kube). */
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/types.js';
import { versionInfo } from '../discovery.js';

/** How long /readyz waits for the store's ping, by default. */
export const defaultPingTimeoutMs = 5000;

export function registerHealthRoutes(app: FastifyInstance, store: Store, packageVersion: string, pingTimeoutMs = defaultPingTimeoutMs): void {
  const version = JSON.stringify(versionInfo(packageVersion));
  app.get('/version', (_req, reply) => reply.type('application/json').send(version));
  const ok = (_req: unknown, reply: { type(t: string): { send(b: string): unknown } }) => reply.type('text/plain').send('ok');
  app.get('/healthz', ok);
  app.get('/livez', ok);
  // Anyone may ask (no key), and a ping is a database round trip on PostgreSQL: every /readyz asked
  // while one is out shares it, so a flood costs the store one ping at a time, not one each (a
  // review). Not kept after it answers: a store that just failed is unready at the next ask.
  // A ping that does not answer within pingTimeoutMs counts as failed and is no longer shared: one
  // stuck on a dead connection would otherwise hold every later ask (review of the change).
  let pinging: Promise<void> | undefined;
  const ping = () => {
    if (pinging) return pinging;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the store did not answer a ping within ${pingTimeoutMs} ms`)), pingTimeoutMs);
      timer.unref();
    });
    const current: Promise<void> = Promise.race([Promise.resolve().then(() => store.ping()), timedOut]).finally(() => {
      clearTimeout(timer);
      if (pinging === current) pinging = undefined;
    });
    pinging = current;
    return current;
  };
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
