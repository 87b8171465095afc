/**
 * Found by the review of stop 64's value-setter change: management.service/value-set-by is the
 * server's, but `teamkeys import` kept it in the manifests it wrote, and the planner compared it
 * like any annotation (under sync-strategy: replace, removed it as not in git), so once a value's
 * setter changed, plan reported drift forever. Import drops it, the planner never compares it, and
 * validate refuses it in git.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { importObjects } from '../../src/gitops/import.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';

const setBy = 'management.service/value-set-by';
const json = { 'Content-Type': 'application/json' };

describe('the value setter in GitOps', () => {
  let server: InProcess;
  let client: HttpClient;
  let source: string;
  const run = (mode: 'plan' | 'apply', sourceId = 'keys') =>
    reconcile({ mode, client, source: { source, sourceId }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2 }).then((r) => r.report);

  beforeAll(async () => {
    server = await startInProcess();
    client = new HttpClient({ server: server.base, token: adminKey });
    source = mkdtempSync(join(tmpdir(), 'zz-review3-'));
    const post = (path: string, body: unknown, key = adminKey) => server.fetch(`${server.api}/${path}`, { method: 'POST', headers: { ...json, Authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    expect((await post('teams', { metadata: { name: 'admins2' }, spec: { users: ['olga'], clusterRoles: [{ name: 'management-admin' }] } })).status).toBe(201);
    expect((await post('ownedaccesskeys', { metadata: { name: 'olga-key' }, spec: { user: 'olga', key: `OlgaKey${'k'.repeat(40)}` } })).status).toBe(201);
    expect((await post('ownedaccesskeys', { metadata: { name: 'ci' }, spec: { user: 'ci-bot' } })).status).toBe(201);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('import leaves the server-owned annotation out of git', async () => {
    const { files } = await importObjects(client, { all: false });
    const ci = files.find((f) => f.path === 'ownedaccesskeys/ci.yaml')!;
    expect(ci.text).not.toContain(setBy);
    writeFileSync(join(source, 'ci.yaml'), ci.text);
    expect((await run('apply')).outcome).toBe('applied');
    expect((await run('plan')).outcome).toBe('clean');
  });

  it('after a rotation by someone else, plan stays clean', async () => {
    const res = await server.fetch(`${server.api}/ownedaccesskeys/ci/rotation`, { method: 'POST', headers: { ...json, Authorization: `Bearer OlgaKey${'k'.repeat(40)}` }, body: JSON.stringify({ kind: 'KeyRotation', spec: { overlapSeconds: 0 } }) });
    expect(res.status).toBe(201);
    expect((await run('plan')).outcome).toBe('clean');
  });

  it('validate refuses the annotation in git, at its field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-setter-'));
    try {
      writeFileSync(join(dir, 'k.yaml'), `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: claimed\n  annotations:\n    ${setBy}: user:dan\nspec:\n  user: dan\n`);
      const report = (await reconcile({ mode: 'plan', client, source: { source: dir, sourceId: 'claims' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2 })).report;
      expect(JSON.stringify(report.errors)).toContain(`${setBy} is written by the server when a key's value is set; it does not belong in git`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a key under sync-strategy: replace is clean after its first apply', async () => {
    const replaceDir = mkdtempSync(join(tmpdir(), 'teamkeys-replace-'));
    try {
      writeFileSync(join(replaceDir, 'k.yaml'), `apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: replaced
  annotations:
    gitops.management.service/sync-strategy: replace
spec:
  user: ci-bot
  ttl: 3600
`);
      const go = (mode: 'plan' | 'apply') => reconcile({ mode, client, source: { source: replaceDir, sourceId: 'replace' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2 }).then((r) => r.report);
      expect((await go('apply')).outcome).toBe('applied');
      expect((await go('plan')).outcome).toBe('clean');
    } finally {
      rmSync(replaceDir, { recursive: true, force: true });
    }
  });
});
