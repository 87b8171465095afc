/**
 * A job token is exchanged once across replicas: two servers on one PostgreSQL database, the token
 * exchanged on one and replayed on the other, which refuses it (the single-use record is the store's).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/backends/postgres.js';
import { startPostgres, type PostgresServer } from '../store/postgres-server.js';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { create } from '../auth/fixture.js';
import { startIssuer, type TestIssuer } from './issuer.js';

const exchange = async (server: InProcess, token: string) => {
  const res = await fetch(`${server.base}/auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: token, subject_token_type: 'urn:ietf:params:oauth:token-type:jwt' }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('token exchange on two replicas sharing PostgreSQL', () => {
  let pg: PostgresServer;
  let issuer: TestIssuer;
  let a: InProcess;
  let b: InProcess;

  beforeAll(async () => {
    pg = await startPostgres();
    issuer = await startIssuer();
    const url = await pg.database();
    a = await startInProcess({ store: new PostgresStore(url, { pollIntervalMs: 50 }), federation: { ca: issuer.ca } });
    b = await startInProcess({ store: new PostgresStore(url, { pollIntervalMs: 50 }), federation: { ca: issuer.ca } });
    expect((await create(a, 'teams', { metadata: { name: 'payments' }, spec: {} })).status).toBe(201);
    const rule = { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'payments-main' }, spec: { issuer: issuer.url, audiences: ['teamkeys'], claims: { repository_id: '1001' }, team: 'payments' } };
    expect((await create(a, 'federatedcredentials', rule)).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await issuer?.close();
    pg?.stop();
  });

  it('a token exchanged on one replica is refused on the other', async () => {
    const token = await issuer.token();
    const first = await exchange(a, token);
    expect(first.status).toBe(200);
    const replay = await exchange(b, token);
    expect(replay).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'the token was exchanged already: a job token is exchanged once (jti)' } });
    // The other replica exchanges fresh tokens: the refusal was the replay's, not the replica's.
    expect((await exchange(b, await issuer.token())).status).toBe(200);
  });
});
