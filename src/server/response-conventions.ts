/**
 * What every response says as kube-apiserver's say it, in one hook pair rather than in each route:
 * an `Audit-Id` (the id of the request's audit events), `Cache-Control: no-cache, private` unless
 * the route says otherwise, `Content-Type: application/json` without a charset (JSON is UTF-8), and
 * a JSON body that ends in a newline, as Go's json.Encoder writes it.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** This request's audit id: its Audit-Id header and the auditID of the audit events its writes make. */
    auditID: string;
  }
}

const jsonWithCharset = /^application\/json;\s*charset=utf-8$/i;

/** The audit id of a request (set before any route runs). */
export const auditIdOf = (req: FastifyRequest): string => req.auditID;

export function registerResponseConventions(app: FastifyInstance): void {
  app.decorateRequest('auditID', '');
  // Callback-style hooks, as every hook on the path of each request: an async one costs a promise
  // and a microtask turn per request.
  app.addHook('onRequest', (req, reply, done) => {
    req.auditID = randomUUID();
    // On the raw response: a watch writes its own head (watch-response.ts) and still carries these.
    reply.raw.setHeader('Audit-Id', req.auditID);
    reply.raw.setHeader('Cache-Control', 'no-cache, private');
    done();
  });
  app.addHook('onSend', (_req, reply, payload, done) => done(null, newlineEnded(reply.getHeader('content-type'), payload, (t) => void reply.header('content-type', t))));
}

/** A JSON body ending in a newline, its type without a charset; any other body as it is. */
function newlineEnded(type: unknown, payload: unknown, setType: (t: string) => void): unknown {
  if (typeof type !== 'string' || !/^application\/json\b/i.test(type)) return payload;
  if (jsonWithCharset.test(type)) setType('application/json');
  if (typeof payload === 'string') return payload.endsWith('\n') ? payload : `${payload}\n`;
  if (Buffer.isBuffer(payload)) return payload.at(-1) === 0x0a ? payload : Buffer.concat([payload, Buffer.from('\n')]);
  return payload;
}
