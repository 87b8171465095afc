/**
 * Found by a review (stop 63): pruning a Team checked only the keys bound to it. The server binds a
 * team's FederatedCredentials to it the same way (an ownerReference), so the garbage collector took
 * another source's, or a hand-made, CI trust rule with the team, outside the plan and max-prune.
 */
import { mkdtempSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { applyPlanFile, writeSavedPlan } from '../../src/gitops/saved/plan-file.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';

const team = (name: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  users: [ana]\n`;
const rule = (name: string, teamName: string) =>
  `apiVersion: management.service/v1\nkind: FederatedCredential\nmetadata:\n  name: ${name}\nspec:\n  issuer: https://ci.acme.internal\n  audiences: [teamkeys]\n  claims:\n    project: ${teamName}\n  team: ${teamName}\n`;

describe("pruning a team and the FederatedCredentials bound to it", () => {
  let server: InProcess;
  let source: string;
  let client: HttpClient;
  const run = (mode: 'plan' | 'apply') => reconcile({ mode, client, source: { source, sourceId: 'teams-src' }, prune: true, allowEmpty: false, maxPrune: 10, concurrency: 2 }).then((r) => r.report);
  const exists = async (path: string) => (await server.fetch(`${server.api}/${path}`)).status === 200;

  beforeAll(async () => {
    server = await startInProcess({});
    client = new HttpClient({ server: server.base, token: adminKey });
    source = mkdtempSync(join(tmpdir(), 'teamkeys-team-bound-'));
    for (const name of ['alpha', 'beta', 'keep']) writeFileSync(join(source, `${name}.yaml`), team(name));
    expect((await run('apply')).outcome).toBe('applied');
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('refuses a plan pruning a team whose FederatedCredential lives outside the source, and keeps both', async () => {
    const made = await server.fetch(`${server.api}/federatedcredentials`, { method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: rule('alpha-ci', 'alpha') });
    expect(made.status, await made.clone().text()).toBe(201);
    unlinkSync(join(source, 'alpha.yaml'));
    const report = await run('apply');
    expect(report.outcome).toBe('refused');
    expect(report.refused).toBe('pruning a team deletes its keys and FederatedCredentials too, and this plan keeps FederatedCredential/alpha-ci (team alpha): delete them first, or keep the team in the source');
    expect(await exists('teams/alpha')).toBe(true);
    expect(await exists('federatedcredentials/alpha-ci')).toBe(true);
    writeFileSync(join(source, 'alpha.yaml'), team('alpha'));
  });

  it('is an error at the spec.team of a FederatedCredential the source declares for a team it prunes', async () => {
    unlinkSync(join(source, 'beta.yaml'));
    writeFileSync(join(source, 'beta-ci.yaml'), rule('beta-ci', 'beta'));
    const report = await run('apply');
    expect(report.outcome).toBe('invalid');
    expect(report.errors.map((e) => `${e.file}:${e.line}: ${e.message}`)).toEqual([
      'beta-ci.yaml:10: spec.team: team "beta" is no longer in the source and this plan prunes it, which deletes this FederatedCredential with it: remove the FederatedCredential from the source too, or keep the team',
    ]);
    expect(await exists('teams/beta')).toBe(true);
    unlinkSync(join(source, 'beta-ci.yaml'));
    writeFileSync(join(source, 'beta.yaml'), team('beta'));
  });

  // Found by a review (stop 63): the deletes ran stage by stage whatever the earlier ones did, so a
  // key whose delete was re-planned (its pruning disabled just then) went with its team anyway.
  it("does not delete a team whose key's delete did not happen, and says why", async () => {
    writeFileSync(join(source, 'eps.yaml'), team('eps'));
    writeFileSync(join(source, 'eps-ci.yaml'), `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: eps-ci\nspec:\n  team: eps\n`);
    expect((await run('apply')).outcome).toBe('applied');
    unlinkSync(join(source, 'eps.yaml'));
    unlinkSync(join(source, 'eps-ci.yaml'));
    // Someone protects the key between the plan and its delete.
    const racing = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop === 'delete') {
          return async (plural: string, name: string, ...rest: unknown[]) => {
            if (plural === 'ownedaccesskeys' && name === 'eps-ci') {
              const patched = await server.fetch(`${server.api}/ownedaccesskeys/eps-ci`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { annotations: { 'gitops.management.service/prune': 'disabled' } } }) });
              expect(patched.status).toBe(200);
            }
            return (target.delete as (...a: unknown[]) => Promise<unknown>).call(target, plural, name, ...rest);
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    const report = (await reconcile({ mode: 'apply', client: racing, source: { source, sourceId: 'teams-src' }, prune: true, allowEmpty: false, maxPrune: 10, concurrency: 2 })).report;
    expect(report.objects.filter((o) => o.name.startsWith('eps')).map((o) => `${o.kind}/${o.name} ${o.result}${o.error ? `: ${o.error}` : ''}`)).toEqual([
      'OwnedAccessKey/eps-ci Skipped',
      'Team/eps Failed: Team/eps: not deleted: OwnedAccessKey/eps-ci was not deleted by this run, and the server would delete it with its team',
    ]);
    expect(report.outcome).toBe('failed');
    expect(await exists('teams/eps')).toBe(true);
    expect(await exists('ownedaccesskeys/eps-ci')).toBe(true);
    writeFileSync(join(source, 'eps.yaml'), team('eps'));
  });

  describe('a saved plan', () => {
    const save = async (file: string) => {
      const planned = await reconcile({ mode: 'plan', client, source: { source, sourceId: 'teams-src' }, prune: true, allowEmpty: false, maxPrune: 10, concurrency: 2 });
      expect(planned.report.errors).toEqual([]);
      expect(await writeSavedPlan(file, planned, client), JSON.stringify(planned.report.refused ?? planned.report.outcome)).toBeUndefined();
    };

    it('pruning a team is refused at apply when a key was made for the team since the plan, and nothing is written', async () => {
      writeFileSync(join(source, 'gamma.yaml'), team('gamma'));
      expect((await run('apply')).outcome).toBe('applied');
      unlinkSync(join(source, 'gamma.yaml'));
      const file = join(source, '..', `gamma-${Date.now()}.plan.json`);
      await save(file);
      const key = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'gamma-ci' }, spec: { team: 'gamma' } }) });
      expect(key.status).toBe(201);
      const applied = await applyPlanFile(file, client, { concurrency: 2 });
      rmSync(file, { force: true });
      expect(applied.outcome).toBe('refused');
      expect(applied.refused).toBe('the plan is stale, nothing was written: pruning a team deletes its keys and FederatedCredentials too, and this plan keeps OwnedAccessKey/gamma-ci (team gamma): delete them first, or keep the team in the source. Run teamkeys plan again and review the new plan');
      expect(await exists('teams/gamma')).toBe(true);
      expect(await exists('ownedaccesskeys/gamma-ci')).toBe(true);
      writeFileSync(join(source, 'gamma.yaml'), team('gamma'));
    });

    // The review's second pass: the check at apply counted a rule the plan moves to another team as kept.
    it('pruning a team applies when the plan moves its FederatedCredential to another team', async () => {
      writeFileSync(join(source, 'mv-a.yaml'), team('mv-a'));
      writeFileSync(join(source, 'mv-b.yaml'), team('mv-b'));
      writeFileSync(join(source, 'mv-ci.yaml'), rule('mv-ci', 'mv-a'));
      expect((await run('apply')).outcome).toBe('applied');
      unlinkSync(join(source, 'mv-a.yaml'));
      writeFileSync(join(source, 'mv-ci.yaml'), rule('mv-ci', 'mv-b').replace('project: mv-b', 'project: mv-a'));
      const file = join(source, '..', `mv-${Date.now()}.plan.json`);
      await save(file);
      const applied = await applyPlanFile(file, client, { concurrency: 2 });
      rmSync(file, { force: true });
      expect(applied.refused).toBeUndefined();
      expect(applied.outcome).toBe('applied');
      expect(await exists('teams/mv-a')).toBe(false);
      const moved = (await (await server.fetch(`${server.api}/federatedcredentials/mv-ci`)).json()) as { spec: { team: string } };
      expect(moved.spec.team).toBe('mv-b');
    });

    it("creating a FederatedCredential for a live team is refused at apply when the team was re-created since", async () => {
      expect((await server.fetch(`${server.api}/teams`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'delta' }, spec: { users: ['ana'] } }) })).status).toBe(201);
      writeFileSync(join(source, 'delta-ci.yaml'), rule('delta-ci', 'delta'));
      const file = join(source, '..', `delta-${Date.now()}.plan.json`);
      await save(file);
      expect((await server.fetch(`${server.api}/teams/delta`, { method: 'DELETE' })).status).toBe(200);
      expect((await server.fetch(`${server.api}/teams`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'delta' }, spec: { clusterRoles: [{ name: 'management-admin' }] } }) })).status).toBe(201);
      const applied = await applyPlanFile(file, client, { concurrency: 2 });
      rmSync(file, { force: true });
      unlinkSync(join(source, 'delta-ci.yaml'));
      expect(applied.outcome).toBe('refused');
      expect(applied.refused).toMatch(/^the plan is stale, nothing was written: Team\/delta was deleted and created again since the plan/);
      expect(await exists('federatedcredentials/delta-ci')).toBe(false);
    });
  });
});
