/**
 * A provider that rotates refresh tokens (Dex's default; oidc-provider's rotateRefreshToken here)
 * ends the token a refresh sends as soon as its token endpoint answers. When userinfo then fails, the
 * refresh is `unreachable`, and the new token must be kept anyway: before, it was dropped, the next
 * refresh sent the spent one, was refused invalid_grant, and the person was signed out by a brief
 * userinfo outage (found by a review). The identity refresher against a real OpenID provider.
 */
import * as client from 'openid-client';
import pino from 'pino';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { refreshErrorAnnotation, refusedAnnotation } from '../../src/auth/login-keys.js';
import { createRegistry, type Registry } from '../../src/registry/registry.js';
import { mintLoginKey } from '../../src/signin/mint.js';
import { Provider } from '../../src/signin/provider.js';
import { IdentityRefresher } from '../../src/signin/refresh.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { Browser, startProvider, type TestProvider } from './fixture.js';

describe('an identity refresh whose userinfo fails after the provider rotated the refresh token', () => {
  let idp: TestProvider;
  let provider: Provider;
  let registry: Registry;
  beforeAll(async () => {
    idp = await startProvider({ rotateRefreshTokens: true });
    provider = new Provider({
      issuerUrl: idp.issuer, clientId: 'teamkeys', clientSecret: readFileSync(idp.clientSecretFile, 'utf8').trim(), ca: readFileSync(idp.caFile),
      usernameClaim: 'preferred_username', usernamePrefix: '', groupsClaim: 'groups', groupsPrefix: '', allowedGroups: [], extraScopes: ['groups'],
      connectorName: 'oidc', loginKeyTtlSeconds: 3600, refreshIntervalMs: 60_000, refreshConcurrency: 1,
    });
    registry = createRegistry(new MemoryStore());
  }, 60_000);
  afterAll(() => idp.stop());

  it('keeps the rotated token: the refresh after the outage succeeds, and the key still works for its person', async () => {
    await idp.setUser('rhea', { groups: ['devs'] });
    const config = await provider.configuration();
    const started = await client.initiateDeviceAuthorization(config, { scope: await provider.scopes() });
    const browser = new Browser([readFileSync(idp.caFile)]);
    await browser.signIn(started.verification_uri_complete!, 'rhea').finally(() => browser.close());
    const tokens = await client.pollDeviceAuthorizationGrant(config, started);
    const found = await provider.identityOf(config, tokens);
    if ('refusal' in found) throw new Error(found.refusal);
    const minted = await mintLoginKey(registry, { ...found, refreshToken: tokens.refresh_token!, ttlSeconds: 3600, requester: { username: found.username }, via: 'test' }, new Date());
    const refresher = new IdentityRefresher(registry, provider, pino({ level: 'silent' }), { intervalMs: 60_000, concurrency: 1 });
    const key = async () => (await registry.ownedaccesskeys.get(minted.name)) as OwnedAccessKey;

    // Rotation followed while the provider is well.
    expect(await refresher.refresh(await key())).toBe('refreshed');
    await idp.failUserinfo(1);
    expect(await refresher.refresh(await key())).toBe('unreachable');
    expect((await key()).metadata.annotations?.[refreshErrorAnnotation]).toMatch(/the identity provider could not be reached/);
    // Well again: the token kept is the live one.
    expect(await refresher.refresh(await key())).toBe('refreshed');
    const after = await key();
    expect(after.metadata.annotations?.[refusedAnnotation]).toBeUndefined();
    expect(after.metadata.annotations?.[refreshErrorAnnotation]).toBeUndefined();
    expect(await refresher.refresh(after)).toBe('refreshed');
  }, 60_000);
});
