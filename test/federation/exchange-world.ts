/**
 * A server with the federation on, and a test issuer it trusts: each describe that calls
 * exchangeWorld gets its own, started before its cases and closed after them, with the exchange,
 * a FederatedCredential's create and a request with a minted key.
 */
import { afterAll, beforeAll } from 'vitest';
import { create } from '../auth/fixture.js';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { startIssuer, type TestIssuer } from './issuer.js';

const grant = 'urn:ietf:params:oauth:grant-type:token-exchange';
const idToken = 'urn:ietf:params:oauth:token-type:id_token';

export function exchangeWorld(opts: { garbageCollector?: boolean } = {}) {
  const h = {} as { server: InProcess; issuer: TestIssuer };
  beforeAll(async () => {
    h.issuer = await startIssuer();
    h.server = await startInProcess({ federation: { ca: h.issuer.ca, jwksCooldownMs: 0 }, ...(opts.garbageCollector === false ? { garbageCollector: false } : {}) });
  });
  afterAll(async () => {
    await h.server.close();
    await h.issuer.close();
  });
  const exchange = async (token: string, extra: Record<string, string> = {}) => {
    const res = await fetch(`${h.server.base}/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: grant, subject_token: token, subject_token_type: idToken, ...extra }).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string | number> };
  };
  const rule = (name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) =>
    create(h.server, 'federatedcredentials', { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name, ...metadata }, spec: { issuer: h.issuer.url, audiences: ['teamkeys'], ...spec } });
  const as = (key: string, path: string) => fetch(`${h.server.api}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  return { h, exchange, rule, as };
}

