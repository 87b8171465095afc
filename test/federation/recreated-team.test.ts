/**
 * A FederatedCredential for a team trusts that team, not a team created under its name after it
 * was deleted: until the garbage collector removes the rule (a lease handover, a failing pass, its
 * debounce), an exchange on it is refused. Found by a review: the exchange minted a key bound to
 * the new team, with its roles. The collector is off here, standing in for that window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create } from '../auth/fixture.js';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { startIssuer, type TestIssuer } from './issuer.js';

const grant = 'urn:ietf:params:oauth:grant-type:token-exchange';
const idToken = 'urn:ietf:params:oauth:token-type:id_token';

describe('a FederatedCredential whose team was deleted and created again under its name', () => {
  let server: InProcess;
  let issuer: TestIssuer;
  const exchange = async (extra: Record<string, string> = {}) => {
    const res = await fetch(`${server.base}/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: grant, subject_token: await issuer.token({}, { ttl: 300 }), subject_token_type: idToken, ...extra }).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };
  const rule = (name: string, team: string) =>
    create(server, 'federatedcredentials', { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name }, spec: { issuer: issuer.url, audiences: ['teamkeys'], team, claims: { repository_id: '1001', repository_owner_id: '2002', ref: 'refs/heads/main' } } });

  beforeAll(async () => {
    issuer = await startIssuer();
    server = await startInProcess({ federation: { ca: issuer.ca, jwksCooldownMs: 0 }, garbageCollector: false });
  });
  afterAll(async () => {
    await server.close();
    await issuer.close();
  });

  it('mints nothing on the new team, saying why, and a rule written for the new team does', async () => {
    expect((await create(server, 'teams', { metadata: { name: 'ci' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
    expect((await rule('ci-main', 'ci')).status).toBe(201);
    expect((await exchange()).status).toBe(200);
    expect((await server.fetch(`${server.api}/teams/ci`, { method: 'DELETE' })).status).toBe(200);
    expect((await create(server, 'teams', { metadata: { name: 'ci' }, spec: { clusterRoles: [{ name: 'accesskeys-admin' }] } })).status).toBe(201);
    const refused = await exchange();
    expect(refused).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'the FederatedCredential\'s team "ci" was deleted: a team created since under its name is not the one the rule trusts' } });
    // Trust in the new team is declared anew, by someone who may.
    expect((await server.fetch(`${server.api}/federatedcredentials/ci-main`, { method: 'DELETE' })).status).toBe(200);
    expect((await rule('ci-main-again', 'ci')).status).toBe(201);
    const minted = await exchange({ federated_credential: 'ci-main-again' });
    expect(minted.status, JSON.stringify(minted.body)).toBe(200);
    expect((await fetch(`${server.api}/ownedaccesskeys/admin`, { headers: { Authorization: `Bearer ${minted.body.access_token}` } })).status).toBe(200);
  });
});
