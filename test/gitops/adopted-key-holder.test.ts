/**
 * A key git declares that someone created on the server first, under its name, for themselves:
 * apply does not adopt it for the holder git names, since its creator knows its value (found by a
 * review: the value then acted for team prod). The manifest is an error at its holder's
 * file:line; once the live key is deleted, apply creates git's key with a new value. A key adopted
 * for the holder it has (import, then apply) is adopted as before.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';

const json = { 'Content-Type': 'application/json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;

describe('a key git declares, created on the server first by someone else', () => {
  let server: InProcess;
  let source: string;
  let client: HttpClient;
  const run = (mode: 'plan' | 'apply' = 'apply') => reconcile({ mode, client, source: { source, sourceId: 'prod-keys' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2 }).then((r) => r.report);

  beforeAll(async () => {
    server = await startInProcess({});
    source = mkdtempSync(join(tmpdir(), 'teamkeys-adopt-src-'));
    client = new HttpClient({ server: server.base, token: adminKey });
    for (const body of [
      { kind: 'teams', obj: { metadata: { name: 'prod' }, spec: { clusterRoles: [{ name: 'accesskeys-admin' }] } } },
      { kind: 'ownedaccesskeys', obj: { metadata: { name: 'mallory-key' }, spec: { user: 'mallory', key: keyOf('mallory') } } },
    ])
      expect((await server.fetch(`${server.api}/${body.kind}`, { method: 'POST', headers: json, body: JSON.stringify(body.obj) })).status).toBe(201);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('is not adopted for another holder: an error at the holder, nothing written, and the squatted value acts for no team', async () => {
    // mallory names a key after the one git will declare, for herself, with a value she chose.
    const squatted = `Deploy${'d'.repeat(40)}`;
    const made = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { ...json, Authorization: `Bearer ${keyOf('mallory')}` }, body: JSON.stringify({ metadata: { name: 'deploy-prod' }, spec: { user: 'mallory', key: squatted } }) });
    expect(made.status).toBe(201);
    writeFileSync(join(source, 'deploy.yaml'), 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: deploy-prod\nspec:\n  team: prod\n');
    const report = await run();
    expect(report.outcome).toBe('invalid');
    expect(report.errors).toEqual([
      expect.objectContaining({
        line: 6,
        message:
          'OwnedAccessKey "deploy-prod" acts for user "mallory" on the server: giving it to team "prod" would keep its value, which whoever held it knows, and give that value the new holder\'s rights. Delete the key on the server (apply then creates it with a new value) or give it another name in git',
      }),
    ]);
    const live = (await (await server.fetch(`${server.api}/ownedaccesskeys/deploy-prod`)).json()) as { spec: { user?: string; team?: string } };
    expect(live.spec).toMatchObject({ user: 'mallory' });
    expect(live.spec.team).toBeUndefined();
    expect((await fetch(`${server.api}/ownedaccesskeys/admin`, { headers: { Authorization: `Bearer ${squatted}` } })).status).toBe(403);
    // In pull-request mode the same refusal does not name the live holder: a pull request could
    // name any key with a wrong holder to learn who holds it (noticed at stop 62, fixed at 63).
    const pr = (await reconcile({ mode: 'plan', client, source: { source, sourceId: 'prod-keys' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2, withholdUnnamedLiveValues: true })).report;
    expect(pr.outcome).toBe('invalid');
    expect(pr.errors.map((e) => [e.line, e.message])).toEqual([
      [6, 'OwnedAccessKey "deploy-prod" acts for another holder (which one is not shown in a pull request) on the server: giving it to team "prod" would keep its value, which whoever held it knows, and give that value the new holder\'s rights. Delete the key on the server (apply then creates it with a new value) or give it another name in git'],
    ]);
    expect(JSON.stringify(pr)).not.toContain('mallory');

    // Deleted on the server, git's key is created with a value of the server's.
    expect((await server.fetch(`${server.api}/ownedaccesskeys/deploy-prod`, { method: 'DELETE' })).status).toBe(200);
    expect((await run()).outcome).toBe('applied');
    expect((await fetch(`${server.api}/teams/prod`, { headers: { Authorization: `Bearer ${squatted}` } })).status).toBe(401);
  });

  it('is not given another holder when it carries this source\'s annotation either: anyone may put it on a key of their own', async () => {
    const squatted = `Squat${'s'.repeat(40)}`;
    const made = await server.fetch(`${server.api}/ownedaccesskeys`, {
      method: 'POST',
      headers: { ...json, Authorization: `Bearer ${keyOf('mallory')}` },
      body: JSON.stringify({ metadata: { name: 'release-prod', annotations: { 'gitops.management.service/source': 'prod-keys' } }, spec: { user: 'mallory', key: squatted } }),
    });
    expect(made.status).toBe(201);
    writeFileSync(join(source, 'release.yaml'), 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: release-prod\nspec:\n  team: prod\n');
    const report = await run();
    expect(report.outcome).toBe('invalid');
    expect(report.errors.map((e) => e.message)).toEqual([expect.stringContaining('OwnedAccessKey "release-prod" acts for user "mallory" on the server')]);
    expect((await fetch(`${server.api}/ownedaccesskeys/admin`, { headers: { Authorization: `Bearer ${squatted}` } })).status).toBe(403);
    expect((await server.fetch(`${server.api}/ownedaccesskeys/release-prod`, { method: 'DELETE' })).status).toBe(200);
    expect((await run()).outcome).toBe('applied');
  });

  it('is adopted for the holder it has, as import then apply does', async () => {
    expect((await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'bot-key' }, spec: { user: 'bot' } }) })).status).toBe(201);
    writeFileSync(join(source, 'bot.yaml'), 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: bot-key\nspec:\n  user: bot\n');
    const report = await run();
    expect(report.errors).toEqual([]);
    expect(report.outcome).toBe('applied');
    const live = (await (await server.fetch(`${server.api}/ownedaccesskeys/bot-key`)).json()) as { metadata: { annotations?: Record<string, string> } };
    expect(live.metadata.annotations?.['gitops.management.service/source']).toBe('prod-keys');
  });
});
