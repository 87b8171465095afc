/**
 * Headless sign-in is open to anyone without a key, and each start makes the server poll the
 * provider until the code expires (15 minutes here): the number waiting at once is bounded, or
 * anyone could make the server hold and run any number of pollers against the provider.
 */
import { readFileSync } from 'node:fs';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import type { Registry } from '../../src/registry/registry.js';
import { DeviceSignIn } from '../../src/signin/device.js';
import { defaultConnectorName, defaultGroupsClaim, defaultUsernameClaim } from '../../src/signin/options.js';
import { s256 } from '../../src/signin/pending.js';
import { Provider } from '../../src/signin/provider.js';
import { SignIn } from '../../src/signin/sign-in.js';
import Fastify from 'fastify';
import { registerSignInRoutes } from '../../src/server/routes/signin.js';
import { handleError } from '../../src/server/errors.js';
import { statusBeforeBody } from '../support/before-body.js';
import { budgetScopes } from '../../src/server/client-address.js';
import { startProvider, type TestProvider } from './fixture.js';

let provider: TestProvider;

const signInFor = (provider: TestProvider) =>
  new SignIn({} as Registry, new Provider({
    issuerUrl: provider.issuer, clientId: 'teamkeys', clientSecret: readFileSync(provider.clientSecretFile, 'utf8').trim(), ca: readFileSync(provider.caFile),
    usernameClaim: defaultUsernameClaim, usernamePrefix: '', groupsClaim: defaultGroupsClaim, groupsPrefix: '', allowedGroups: [], extraScopes: [], connectorName: defaultConnectorName,
    loginKeyTtlSeconds: 60, refreshIntervalMs: 60_000, refreshConcurrency: 1,
  }), pino({ level: 'silent' }));

describe('device sign-ins waiting for approval', () => {
  beforeAll(async () => {
    provider = await startProvider();
  }, 60_000);
  afterAll(async () => provider?.stop());

  it('past the bound, a new device sign-in is refused with 429', async () => {
    const device = new DeviceSignIn(signInFor(provider), 2);
    const body = { code_challenge: s256('v'.repeat(43)) };
    await device.start(body);
    await device.start(body);
    const refused = await device.start(body).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 429, message: 'too many device sign-ins are waiting for approval; try again in a minute' });
  }, 30_000);

  it('one client address may hold only its share of the places: past it that address gets 429, another address still starts', async () => {
    const device = new DeviceSignIn(signInFor(provider), 10, 2);
    const body = { code_challenge: s256('v'.repeat(43)) };
    await device.start(body, '192.0.2.1');
    await device.start(body, '192.0.2.1');
    const refused = await device.start(body, '192.0.2.1').catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: 429, message: 'too many device sign-ins from this address are waiting for approval (at most 2); try again in a minute' });
    await expect(device.start(body, '192.0.2.2')).resolves.toMatchObject({ user_code: expect.any(String) });
  }, 30_000);

  it("an IPv6 address has its own share, and its /64 four addresses' worth", async () => {
    const device = new DeviceSignIn(signInFor(provider), 100, 1, budgetScopes);
    const body = { code_challenge: s256('v'.repeat(43)) };
    await device.start(body, '2001:db8:5:5::1');
    await expect(device.start(body, '2001:db8:5:5::1')).rejects.toMatchObject({ code: 429, message: 'too many device sign-ins from this address are waiting for approval (at most 1); try again in a minute' });
    for (const a of ['2001:db8:5:5::2', '2001:db8:5:5::3', '2001:db8:5:5::4']) await device.start(body, a);
    await expect(device.start(body, '2001:db8:5:5::5')).rejects.toMatchObject({ code: 429, message: "too many device sign-ins from this address's network (2001:db8:5:5::/64) are waiting for approval (at most 4); try again in a minute" });
    await expect(device.start(body, '2001:db8:5:6::1')).resolves.toMatchObject({ user_code: expect.any(String) });
  }, 30_000);

  it('the route refuses an address at its bound before reading the body', async () => {
    const signIn = signInFor(provider);
    const device = new DeviceSignIn(signIn, 10, 2);
    const app = Fastify({ bodyLimit: 4 * 1024 * 1024 });
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    app.setErrorHandler(handleError);
    registerSignInRoutes(app, signIn, device);
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const start = () => fetch(`${base}/auth/device`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code_challenge: s256('v'.repeat(43)) }) });
      expect((await start()).status).toBe(200);
      // Below the bound, the route waits for the body it was promised.
      expect(await statusBeforeBody(base, '/auth/device', 'POST', {}, 500)).toBe('no answer');
      expect((await start()).status).toBe(200);
      expect(await statusBeforeBody(base, '/auth/device', 'POST', {})).toBe('HTTP/1.1 429 Too Many Requests');
      const refused = await start();
      expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, '60']);
      expect(((await refused.json()) as { message: string }).message).toBe('too many device sign-ins from this address are waiting for approval (at most 2); try again in a minute');
    } finally {
      await app.close();
    }
  }, 30_000);
});
