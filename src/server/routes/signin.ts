/**
 * The sign-in endpoints (outside the API prefix: no key is needed to get one):
 * GET /auth/login and /auth/callback for the browser (POST /auth/token, the CLI's one-time code, is token.ts's),
 * POST /auth/device and /auth/device/token for headless sign-in. Keys travel only in POST
 * response bodies, never in a URL or a redirect.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { auditIdOf } from '../response-conventions.js';
import { ApiError, badRequest, serviceUnavailable } from '../../api/errors.js';
import type { DeviceSignIn } from '../../signin/device.js';
import { authPrefix } from '../../signin/options.js';
import { describeError } from '../../signin/provider.js';
import type { SignIn } from '../../signin/sign-in.js';
import { CallbackLimit } from '../../signin/callback-limit.js';
import { clientOf } from '../client-address.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small page for the person in the browser. */
export function page(title: string, message: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>\n`;
}

export function jsonBody(req: FastifyRequest): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw badRequest('the body must be a JSON object');
}

export const requesterOf = (req: FastifyRequest) => ({ ...(req.socket.remoteAddress ? { sourceIP: req.socket.remoteAddress } : {}), ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}), auditID: auditIdOf(req) });

/** The provider could not be reached (discovery, token endpoint): 503, the person may retry. */
function unreachable(err: unknown): ApiError {
  return err instanceof ApiError ? err : serviceUnavailable(`the identity provider cannot be reached: ${describeError(err)}`, 5);
}

export function registerSignInRoutes(app: FastifyInstance, signIn: SignIn, device: DeviceSignIn, callbacks = new CallbackLimit()): void {
  // Nothing here may be cached: every answer is for one person, once.
  const noStore = (reply: FastifyReply) => reply.header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer');
  const html = (reply: FastifyReply, status: number, title: string, message: string) => noStore(reply).code(status).type('text/html; charset=utf-8').send(page(title, message));

  app.get(`${authPrefix}/login`, async (req, reply) => {
    const callback = signIn.opts.redirectUrl ?? `${req.protocol}://${req.headers.host}${authPrefix}/callback`;
    try {
      const { url, setCookie } = await signIn.start(req.query as Record<string, unknown>, callback, req.protocol === 'https');
      return noStore(reply).header('Set-Cookie', setCookie).redirect(url, 302);
    } catch (err) {
      if (err instanceof ApiError && err.code === 400) return html(reply, 400, 'Cannot sign in', err.message);
      req.log.warn({ error: describeError(err) }, 'sign-in could not start');
      return html(reply, 503, 'Cannot sign in', unreachable(err).message);
    }
  });

  // A callback may make the server call the provider: bounded per address, for the server, and in
  // failures per address (signin/callback-limit.ts), all before anything else is done with it.
  // The 429 page of a refused callback, or undefined when it may go on.
  const refusedCallback = (req: FastifyRequest, reply: FastifyReply) => {
    const refused = callbacks.refusal(clientOf(req));
    return refused && html(reply.header('Retry-After', String(refused.details?.retryAfterSeconds ?? 1)), 429, 'Cannot sign in', refused.message);
  };
  app.get(`${authPrefix}/callback`, { onRequest: async (req, reply) => refusedCallback(req, reply) }, async (req, reply) => {
    // Asked again: other callbacks may have taken the places since the hook (no await between this and take).
    const refused = refusedCallback(req, reply);
    if (refused) return refused;
    const giveBack = callbacks.take(clientOf(req));
    let failed = true;
    try {
      const url = new URL(req.url, 'http://callback');
      const next = await signIn.callback(url, req.headers.cookie);
      failed = !('redirect' in next) || new URL(next.redirect).searchParams.has('error');
      const state = url.searchParams.get('state');
      if (state) noStore(reply).header('Set-Cookie', signIn.clearStart(state));
      if ('redirect' in next) return noStore(reply).redirect(next.redirect, 302);
      return html(reply, next.status, 'Cannot sign in', next.message);
    } finally {
      giveBack(failed);
    }
  });

  app.post(`${authPrefix}/device`, {
    // The address's bound is the headers' to decide: a client at it has no body read.
    onRequest: async (req) => {
      const refused = device.refusal(clientOf(req));
      if (refused) throw refused;
    },
  }, async (req, reply) => {
    const started = await device.start(jsonBody(req), clientOf(req)).catch((err: unknown) => {
      throw unreachable(err);
    });
    return noStore(reply).code(200).type('application/json').send(JSON.stringify(started));
  });

  app.post(`${authPrefix}/device/token`, async (req, reply) => {
    const outcome = await device.poll(jsonBody(req), requesterOf(req));
    return noStore(reply).code(200).type('application/json').send(JSON.stringify(outcome));
  });
}
