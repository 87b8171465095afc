/**
 * Found by a review (stop 63): the token's single use was recorded before the mint, so a mint the
 * server refused (the holder's key quota, here) spent the job's token, and the job's retry, once the
 * cause was gone, got "exchanged already". A refused mint stores nothing, and now spends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { create } from '../auth/fixture.js';
import { startIssuer, type TestIssuer } from './issuer.js';

describe('a mint the server refuses', () => {
  let server: InProcess;
  let issuer: TestIssuer;
  const exchange = async (token: string) => {
    const res = await fetch(`${server.base}/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: token, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' }).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    issuer = await startIssuer();
    server = await startInProcess({ federation: { ca: issuer.ca, jwksCooldownMs: 0 }, maxKeysPerUser: 1 });
    expect((await create(server, 'teams', { metadata: { name: 'payments' }, spec: {} })).status).toBe(201);
    expect((await create(server, 'federatedcredentials', { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'payments-main' }, spec: { issuer: issuer.url, audiences: ['teamkeys'], claims: { repository_id: '1001', ref: 'refs/heads/main' }, team: 'payments' } })).status).toBe(201);
  });
  afterAll(async () => {
    await server?.close();
    await issuer?.close();
  });

  it('leaves the token unspent: the same token gets its key once the cause is gone', async () => {
    expect((await exchange(await issuer.token({ sub: 'first' }))).status).toBe(200);
    const second = await issuer.token({ sub: 'second' });
    const refused = await exchange(second);
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain('exceeded quota');
    // The first job's key goes; the second job retries with the token it holds.
    const keys = (await (await server.fetch(`${server.api}/ownedaccesskeys`)).json()) as { items: { metadata: { name: string }; spec: { team?: string } }[] };
    const minted = keys.items.find((k) => k.spec.team === 'payments')!.metadata.name;
    expect((await server.fetch(`${server.api}/ownedaccesskeys/${minted}`, { method: 'DELETE' })).status).toBe(200);
    const retried = await exchange(second);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    // Still exchanged once: a second use of the token that got its key is refused.
    expect((await exchange(second)).body).toEqual({ error: 'invalid_grant', error_description: 'the token was exchanged already: a job token is exchanged once (jti)' });
  });
});
