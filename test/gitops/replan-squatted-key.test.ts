/**
 * The guard that refuses to give a live key another holder (adopted-keys.ts: a user who created
 * `deploy-prod` for themselves would otherwise have their known value act for team prod) ran at plan
 * time only. When the create of git's key lost the race (AlreadyExists: mallory created `deploy-prod`
 * for herself between the plan's read and the write), apply re-planned the object with planObject
 * alone and adopted the squatted key: the value mallory chose acted for team prod (found by a review).
 * The re-plan now runs the per-object guards (adoptedKeyHolders, teamHolderNames) against the object
 * as it is, and the action fails when they refuse.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import type { ApiClient } from '../../src/client/types.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const malloryKey = `MalloryKey${'k'.repeat(40)}`;
const squatted = `Deploy${'d'.repeat(40)}`;

describe('a key squatted between the plan and its create', () => {
  let server: InProcess;
  let source: string;
  let http: HttpClient;

  beforeAll(async () => {
    server = await startInProcess({});
    source = mkdtempSync(join(tmpdir(), 'teamkeys-race-src-'));
    http = new HttpClient({ server: server.base, token: adminKey });
    for (const body of [
      { kind: 'teams', obj: { metadata: { name: 'prod' }, spec: { clusterRoles: [{ name: 'accesskeys-admin' }] } } },
      { kind: 'ownedaccesskeys', obj: { metadata: { name: 'mallory-key' }, spec: { user: 'mallory', key: malloryKey } } },
    ])
      expect((await server.fetch(`${server.api}/${body.kind}`, { method: 'POST', headers: json, body: JSON.stringify(body.obj) })).status).toBe(201);
    writeFileSync(join(source, 'deploy.yaml'), 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: deploy-prod\nspec:\n  team: prod\n');
  });
  afterAll(async () => {
    await http.close();
    await server.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('is not adopted by the re-plan after AlreadyExists: the value mallory chose never acts for team prod', async () => {
    let raced = false;
    // The planned create is about to be sent: mallory gets there first, for herself, with a value she chose.
    const client = new Proxy(http, {
      get(target, prop, receiver) {
        if (prop === 'create') {
          return async (plural: string, body: { metadata: { name?: string } }) => {
            if (!raced && plural === 'ownedaccesskeys' && body.metadata.name === 'deploy-prod') {
              raced = true;
              const made = await fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { ...json, Authorization: `Bearer ${malloryKey}` }, body: JSON.stringify({ metadata: { name: 'deploy-prod' }, spec: { user: 'mallory', key: squatted } }) });
              expect(made.status).toBe(201);
            }
            return target.create(plural as never, body as never);
          };
        }
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as ApiClient;
    const r = await reconcile({ mode: 'apply', client, source: { source, sourceId: 'prod-keys' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2 });
    expect(raced).toBe(true);
    const live = (await (await server.fetch(`${server.api}/ownedaccesskeys/deploy-prod`)).json()) as { spec: { user?: string; team?: string } };
    // What the run did (for the report): the squatted key must keep its holder, or the run must fail.
    const acted = (await fetch(`${server.api}/ownedaccesskeys/admin`, { headers: { Authorization: `Bearer ${squatted}` } })).status;
    expect({ outcome: r.report.outcome, team: live.spec.team, squattedValueReadsAdminKey: acted }).not.toEqual({ outcome: 'applied', team: 'prod', squattedValueReadsAdminKey: 200 });
    // mallory's value reads what only team prod may (accesskeys-admin: every key).
    expect((await fetch(`${server.api}/ownedaccesskeys/admin`, { headers: { Authorization: `Bearer ${squatted}` } })).status).toBe(403);
    expect(live.spec).toMatchObject({ user: 'mallory' });
    expect(JSON.stringify(r.report)).toContain('refused on re-planning against the object as it is now');
  });
});
