/**
 * GET /auth/callback is open to anyone, and GET /auth/login hands out a fresh state for free: each
 * callback with a state and any code made the server call the provider's token endpoint with the
 * client secret, without bound (a review had one address hold 60 calls at once). Bounded now per
 * address, for the server, and in failed callbacks per address (signin/callback-limit.ts).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Registry } from '../../src/registry/registry.js';
import { handleError } from '../../src/server/errors.js';
import { registerSignInRoutes } from '../../src/server/routes/signin.js';
import { CallbackLimit } from '../../src/signin/callback-limit.js';
import { DeviceSignIn } from '../../src/signin/device.js';
import { defaultConnectorName, defaultGroupsClaim, defaultUsernameClaim } from '../../src/signin/options.js';
import { s256 } from '../../src/signin/pending.js';
import { Provider } from '../../src/signin/provider.js';
import { SignIn } from '../../src/signin/sign-in.js';
import { selfSignedCert } from '../support/serve-process.js';
import { startProvider, type TestProvider } from './fixture.js';

const signInAt = (issuerUrl: string, clientSecret: string, ca: Buffer) =>
  new SignIn({} as Registry, new Provider({
    issuerUrl, clientId: 'teamkeys', clientSecret, ca,
    usernameClaim: defaultUsernameClaim, usernamePrefix: '', groupsClaim: defaultGroupsClaim, groupsPrefix: '', allowedGroups: [], extraScopes: [], connectorName: defaultConnectorName,
    loginKeyTtlSeconds: 60, refreshIntervalMs: 60_000, refreshConcurrency: 1,
  }), pino({ level: 'silent' }));

/** The sign-in routes alone on a loopback port, with these callback bounds. */
async function routes(signIn: SignIn, limit: CallbackLimit): Promise<{ app: FastifyInstance; base: string }> {
  const app = Fastify();
  app.setErrorHandler(handleError);
  registerSignInRoutes(app, signIn, new DeviceSignIn(signIn), limit);
  return { app, base: await app.listen({ host: '127.0.0.1', port: 0 }) };
}

/** A browser's sign-in: /auth/login, then the callback with the state it was given and a code it made up. */
async function madeUpCallback(base: string): Promise<Response> {
  const q = new URLSearchParams({ redirect_uri: 'http://127.0.0.1:9/callback', code_challenge: s256('v'.repeat(43)), code_challenge_method: 'S256', state: 'x'.repeat(16) });
  const login = await fetch(`${base}/auth/login?${q}`, { redirect: 'manual' });
  expect(login.status).toBe(302);
  const state = new URL(login.headers.get('location')!).searchParams.get('state');
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  return fetch(`${base}/auth/callback?state=${state}&code=made-up`, { redirect: 'manual', headers: { cookie } });
}

describe('the browser callback against a real provider: failed callbacks spend the address budget', () => {
  let provider: TestProvider;
  beforeAll(async () => {
    provider = await startProvider();
  }, 60_000);
  afterAll(async () => provider?.stop());

  it('made-up codes fail at the provider until the budget is spent; then 429, a page saying so with Retry-After', async () => {
    const signIn = signInAt(provider.issuer, readFileSync(provider.clientSecretFile, 'utf8').trim(), readFileSync(provider.caFile));
    const { app, base } = await routes(signIn, new CallbackLimit({ failures: { burst: 3, perSecond: 0.001 } }));
    try {
      for (let i = 0; i < 3; i++) {
        const failed = await madeUpCallback(base);
        expect(failed.status).toBe(302);
        expect(new URL(failed.headers.get('location')!).searchParams.get('error')).toBeTruthy();
      }
      const refused = await madeUpCallback(base);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await refused.text()).toContain('too many failed sign-ins from this address; try again later');
    } finally {
      await app.close();
    }
  }, 30_000);
});

describe('the browser callback against a slow provider: callbacks at the provider at once are bounded', () => {
  // A token endpoint that takes 1.5 s to refuse: the real provider answers too fast to see how many wait at once.
  let idp: Server;
  let issuer = '';
  let ca: Buffer;
  let inFlight = 0;
  let most = 0;
  let hits = 0;
  beforeAll(async () => {
    const { cert, key } = selfSignedCert();
    ca = readFileSync(cert);
    idp = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') {
        return res.end(JSON.stringify({ issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, response_types_supported: ['code'], id_token_signing_alg_values_supported: ['RS256'] }));
      }
      if (req.url === '/token') {
        hits++;
        most = Math.max(most, ++inFlight);
        setTimeout(() => {
          inFlight--;
          res.statusCode = 400;
          res.end(JSON.stringify({ error: 'invalid_grant' }));
        }, 1500);
        return;
      }
      res.statusCode = 404;
      res.end('{}');
    });
    await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
    issuer = `https://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => idp.close(() => r())));

  it('one address sending 20 callbacks at once has 4 at the provider, the rest 429', async () => {
    const { app, base } = await routes(signInAt(issuer, 's3cret', ca), new CallbackLimit({ failures: { burst: 100, perSecond: 1 } }));
    try {
      const statuses = await Promise.all(Array.from({ length: 20 }, async () => (await madeUpCallback(base)).status));
      expect(statuses.filter((s) => s === 302)).toHaveLength(4);
      expect(statuses.filter((s) => s === 429)).toHaveLength(16);
      expect([hits, most]).toEqual([4, 4]);
    } finally {
      await app.close();
    }
  }, 30_000);

  it('the server-wide bound: places taken by other addresses refuse the next one, and come back when their callbacks end', () => {
    const limit = new CallbackLimit({ perClient: 4, inFlight: 2 });
    const a = limit.take('192.0.2.1');
    limit.take('192.0.2.2');
    expect(limit.refusal('192.0.2.3')).toMatchObject({ code: 429, message: 'too many sign-ins are being finished at once; try again' });
    a(false);
    a(true); // once only: a second call neither frees another place nor charges a failure
    expect(limit.refusal('192.0.2.3')).toBeUndefined();
    expect(limit.refusal('192.0.2.1')).toBeUndefined();
  });
});
