/**
 * Every endpoint of a real `teamkeys serve --sync-source` authenticates: /metrics and the sync
 * report need a key with a role that reads them, POST /sync a valid webhook signature or a
 * management admin's key; health endpoints and /version stay open, as in kube.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../src/daemon/webhook.js';
import { root } from '../support/cli.js';
import { startServe, type Served } from '../server/serve-process.js';
import { eventually } from '../support/eventually.js';
import { statusBeforeBody } from '../support/before-body.js';

const secret = 'webhook-secret-for-tests';
const keyOf = (name: string) => `Endpoint${name}${'e'.repeat(40)}`;

describe('endpoints on the API listener', () => {
  let served: Served;
  let base: string;
  const call = (path: string, key?: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(init.headers as Record<string, string> | undefined) } });

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-endpoints-'));
    writeFileSync(join(dir, 'secret'), secret);
    served = await startServe(['--insecure-http', '--sync-source', join(root, 'examples/gitops'), '--webhook-secret-file', join(dir, 'secret')]);
    base = served.url.replace(/\/kubernetes\/management$/, '');
    const api = `${served.url}/apis/management.service/v1`;
    const post = async (plural: string, body: unknown) => {
      const res = await fetch(`${api}/${plural}`, { method: 'POST', headers: { Authorization: `Bearer ${served.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBe(201);
    };
    await post('teams', { metadata: { name: 'viewers' }, spec: { users: ['vic'], clusterRoles: [{ name: 'teams-viewer' }] } });
    await post('ownedaccesskeys', { metadata: { name: 'vic' }, spec: { user: 'vic', key: keyOf('vic') } });
    await post('ownedaccesskeys', { metadata: { name: 'nobody' }, spec: { user: 'nobody', key: keyOf('nobody') } });
  });
  afterAll(() => served?.stop());

  it.each([
    ['GET', '/metrics', undefined, 401],
    ['GET', '/metrics', 'nobody', 403],
    ['GET', '/metrics', 'vic', 200], // teams-viewer reads metrics
    ['GET', '/sync/report', undefined, 401],
    ['GET', '/sync/report', 'vic', 403], // the report covers access keys too
    ['POST', '/sync', undefined, 401],
    ['POST', '/sync', 'vic', 403],
    ['POST', '/sync', 'admin', 202],
    ['GET', '/healthz', undefined, 200],
    ['GET', '/readyz', undefined, 200],
    ['GET', '/livez', undefined, 200],
    ['GET', '/version', undefined, 200],
    ['GET', '/kubernetes/management/version', undefined, 200],
  ])('%s %s as %s -> %i', async (method, path, who, code) => {
    const key = who === 'admin' ? served.adminKey : who ? keyOf(who) : undefined;
    const res = await call(path, key, { method });
    expect(res.status).toBe(code);
    if (code === 401) {
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="teamkeys"');
      expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized' });
    }
    if (code === 403) expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Forbidden', message: `forbidden: User "${who}" cannot ${method.toLowerCase()} path "${path}"` });
  });

  it('the admin reads the report; /version has kube\'s shape', async () => {
    await eventually('the sync report is served', async () => (await call('/sync/report', served.adminKey)).status === 200, 20_000);
    expect(await (await call('/sync/report', served.adminKey)).json()).toHaveProperty('objects');
    expect(await (await call('/version')).json()).toMatchObject({ major: expect.any(String), minor: expect.any(String), gitVersion: expect.stringContaining('teamkeys') });
  });

  it('POST /sync without a signature is judged by its key before its body is read', async () => {
    // A review found up to 3 MiB read before the 401 or 403.
    expect(await statusBeforeBody(base, '/sync', 'POST', {})).toBe('HTTP/1.1 401 Unauthorized');
    expect(await statusBeforeBody(base, '/sync', 'POST', { Authorization: `Bearer ${keyOf('vic')}` })).toBe('HTTP/1.1 403 Forbidden');
  });

  it('POST /sync with a valid webhook signature needs no key; a forged one is refused even with no key', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const signed = await call('/sync', undefined, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sign(secret, body) }, body });
    expect(signed.status).toBe(202);
    const forged = await call('/sync', undefined, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Hub-Signature-256': sign('wrong', body) }, body });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ reason: 'Unauthorized', message: 'missing or invalid X-Hub-Signature-256' });
  });
});
