/**
 * The identity refresh needs only the provider (src/signin/provider.ts): no browser flow (SignIn)
 * and no device flow is built here. A Login key is made with a real refresh token of a real OpenID
 * provider, then refreshed by an IdentityRefresher given that Provider alone; what the person would
 * notice is on the key: its groups follow the provider, and a provider that names the person
 * otherwise ends the key rather than renaming it.
 */
import { readFileSync } from 'node:fs';
import * as client from 'openid-client';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { refusedAnnotation } from '../../src/auth/login-keys.js';
import { createRegistry, type Registry } from '../../src/registry/registry.js';
import { mintLoginKey } from '../../src/signin/mint.js';
import { defaultConnectorName, defaultGroupsClaim, defaultUsernameClaim, type SignInOptions } from '../../src/signin/options.js';
import { Provider } from '../../src/signin/provider.js';
import { IdentityRefresher } from '../../src/signin/refresh.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { Browser, startProvider, type TestProvider } from './fixture.js';

let idp: TestProvider;
let provider: Provider;
let registry: Registry;
let refresher: IdentityRefresher;

const options = (p: TestProvider): SignInOptions => ({
  issuerUrl: p.issuer, clientId: 'teamkeys', clientSecret: readFileSync(p.clientSecretFile, 'utf8').trim(), ca: readFileSync(p.caFile),
  usernameClaim: defaultUsernameClaim, usernamePrefix: '', groupsClaim: defaultGroupsClaim, groupsPrefix: '', allowedGroups: [], extraScopes: ['groups'], connectorName: defaultConnectorName,
  loginKeyTtlSeconds: 3600, refreshIntervalMs: 60_000, refreshConcurrency: 1,
});

/** A Login key of `user` holding a refresh token the provider issued (device grant, approved in a browser). */
async function loginKeyOf(user: string): Promise<OwnedAccessKey> {
  const config = await provider.configuration();
  const started = await client.initiateDeviceAuthorization(config, { scope: await provider.scopes() });
  const browser = new Browser([readFileSync(idp.caFile)]);
  await browser.signIn(started.verification_uri_complete!, user).finally(() => browser.close());
  const tokens = await client.pollDeviceAuthorizationGrant(config, started);
  const found = await provider.identityOf(config, tokens);
  if ('refusal' in found) throw new Error(found.refusal);
  expect(tokens.refresh_token).toBeTruthy();
  const minted = await mintLoginKey(registry, { ...found, refreshToken: tokens.refresh_token!, ttlSeconds: 3600, requester: { username: found.username }, via: 'in a test' }, new Date());
  return (await registry.ownedaccesskeys.get(minted.name)) as OwnedAccessKey;
}

const outcomes = async () => (await provider.metrics.refreshes.get()).values.map((v) => [v.labels.outcome, v.value]);

describe('the identity refresh with only the provider', () => {
  beforeAll(async () => {
    idp = await startProvider();
    provider = new Provider(options(idp));
    registry = createRegistry(new MemoryStore());
    refresher = new IdentityRefresher(registry, provider, pino({ level: 'silent' }), { intervalMs: 60_000, concurrency: 1 });
  }, 60_000);
  afterAll(async () => idp?.stop());

  it("follows the provider: the key's groups become the provider's groups now", async () => {
    await idp.setUser('rhea', { groups: ['payments-devs'] });
    const key = await loginKeyOf('rhea');
    expect(key.spec.identity?.groups).toEqual(['payments-devs']);
    await idp.setUser('rhea', { groups: ['ops'] });
    expect(await refresher.refresh(key)).toBe('refreshed');
    const after = (await registry.ownedaccesskeys.get(key.metadata.name!)) as OwnedAccessKey;
    expect(after.spec.identity?.groups).toEqual(['ops']);
    expect(after.metadata.annotations?.[refusedAnnotation]).toBeUndefined();
    expect(await outcomes()).toContainEqual(['refreshed', 1]);
  }, 60_000);

  it('refuses a refresh that names the person otherwise: the key is marked refused, its user kept', async () => {
    await idp.setUser('ivo', { groups: ['payments-devs'] });
    const key = await loginKeyOf('ivo');
    await idp.setUser('ivo', { groups: ['payments-devs'], username: 'admin' });
    expect(await refresher.refresh(key)).toBe('refused');
    const after = (await registry.ownedaccesskeys.get(key.metadata.name!)) as OwnedAccessKey;
    expect(after.spec.user).toBe('ivo');
    expect(after.metadata.annotations?.[refusedAnnotation]).toMatch(/: the identity provider now names this person admin$/);
  }, 60_000);
});
