/**
 * POST /auth/token, the one token endpoint: RFC 8693's token exchange (a CI job's ID token for a
 * short-lived key: src/federation), form-encoded as RFC 6749 asks or as JSON, and sign-in's
 * one-time code (JSON, when sign-in is served). Answers are never cached.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tokenExchangeGrant, type TokenExchange } from '../../federation/exchange.js';
import { invalidRequest, OAuthError } from '../../federation/oauth-error.js';
import { authPrefix } from '../../signin/options.js';
import type { SignIn } from '../../signin/sign-in.js';
import { jsonBody, requesterOf } from './signin.js';

/** The parameters of a form-encoded body, or of a JSON object. */
function params(req: FastifyRequest): Record<string, unknown> {
  const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const text = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(text);
    const out: Record<string, string> = {};
    for (const [k, v] of form) {
      // RFC 6749 3.2: a parameter sent twice is an invalid request.
      if (Object.hasOwn(out, k)) throw invalidRequest(`the parameter ${k} is sent more than once`);
      out[k] = v;
    }
    return out;
  }
  try {
    return jsonBody(req);
  } catch {
    throw invalidRequest('the body must be application/x-www-form-urlencoded or a JSON object');
  }
}

export function registerTokenRoute(app: FastifyInstance, exchange: TokenExchange, signIn: SignIn | undefined): void {
  app.post(`${authPrefix}/token`, async (req, reply) => {
    void reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').header('Referrer-Policy', 'no-referrer');
    let p: Record<string, unknown>;
    try {
      p = params(req);
      if (p.grant_type === tokenExchangeGrant) {
        const answer = await exchange.exchange(p, requesterOf(req));
        return reply.code(200).type('application/json').send(JSON.stringify(answer));
      }
      if (!signIn) throw new OAuthError(400, 'unsupported_grant_type', `grant_type must be ${tokenExchangeGrant}`);
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      if (err.retryAfter !== undefined) void reply.header('Retry-After', String(err.retryAfter));
      return reply.code(err.status).type('application/json').send(JSON.stringify(err.body()));
    }
    const minted = await signIn.exchange(p, requesterOf(req));
    return reply.code(200).type('application/json').send(JSON.stringify(minted));
  });
}
