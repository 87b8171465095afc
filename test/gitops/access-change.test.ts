/**
 * The plan's access change of real manifests against a served store, held against the server:
 * for each change a reviewer meets (a user added to a team with a role, a group added to a team's
 * spec.groups, the role a team grants widened, an access rule naming a user, a team key's scope
 * widened), the plan's gains and losses are exactly what a SelfSubjectAccessReview by each
 * identity answers differently after the apply; the report says it in a line, and a CEL policy
 * refusing a management-admin gain fails the plan at the rule's file:line.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { HttpClient } from '../../src/client/http.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import type { Report } from '../../src/gitops/report/report.js';
import { renderText } from '../../src/gitops/report/text.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { toYaml } from '../support/manifests.js';
import type { Served } from '../review/review-world.js';
import { answers, disagreements, type Asker } from './access-answers.js';

const v1 = 'management.service/v1';
const teamsOnly = (verbs: string[]) => ({ rules: [{ verbs, resources: [{ group: 'management.service', resources: ['teams'] }] }] });

/** The repository's manifests, changed case by case. */
const manifests = {
  payments: { users: ['paula'], access: [{ name: 'self-edit', verbs: ['get', 'update', 'patch'], teams: ['payments'] }, { name: 'readers', verbs: ['get'], users: ['nobody'] }] } as Record<string, unknown>,
  platform: { users: ['pete'], clusterRoles: [{ name: 'teams-viewer' }] } as Record<string, unknown>,
  ci: { team: 'payments', scope: teamsOnly(['get']) } as Record<string, unknown>,
};

// Each case asks about 600 SelfSubjectAccessReviews twice: seconds on a quiet machine, far more on a loaded one.
describe("a plan's access change is what the server answers before and after the apply", { timeout: 180_000 }, () => {
  let server: InProcess;
  let client: HttpClient;
  let dir: string;
  let served: Served;
  const askers: Asker[] = [];
  const write = () =>
    writeFileSync(
      join(dir, 'src/all.yaml'),
      toYaml(
        { apiVersion: v1, kind: 'Team', metadata: { name: 'payments' }, spec: manifests.payments },
        { apiVersion: v1, kind: 'Team', metadata: { name: 'platform' }, spec: manifests.platform },
        { apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name: 'payments-ci' }, spec: manifests.ci },
      ),
    );
  const run = async (mode: 'plan' | 'apply', policyDir?: string) =>
    (await reconcile({ mode, client, source: { source: join(dir, 'src'), sourceId: 'access' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 1, keyDir: join(dir, 'keys'), ...(policyDir ? { policyDir } : {}) })).report;
  const keys = async () => ((await (await server.fetch(`${server.api}/ownedaccesskeys`)).json()) as { items: OwnedAccessKey[] }).items;
  const probe = async (name: string, spec: object, identity: string, owner: Asker['owner']) => {
    const res = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name }, spec }) });
    expect(res.status).toBe(201);
    askers.push({ keyName: name, value: ((await res.json()) as { spec: { key: string } }).spec.key, identity, owner });
  };

  /** Plans the manifests as they now are, asks every identity before and after applying, and returns the plan's report. */
  async function planAndApply(): Promise<Report> {
    write();
    const report = await run('plan');
    expect(report.outcome).toBe('changes');
    // Questions by name about the key the plan changes and one other: the probes' own keys say nothing more.
    const listed = (await keys()).filter((k) => k.metadata.name === 'payments-ci' || k.metadata.name === 'probe-alice');
    const before = await answers(served, askers, listed, ['payments', 'platform', 'nonexistent']);
    expect((await run('apply')).outcome).toBe('applied');
    const after = await answers(served, askers, listed, ['payments', 'platform', 'nonexistent']);
    expect(disagreements(report.accessChange!, askers, before, after, new Map(listed.map((k) => [k.metadata.name!, k])))).toEqual([]);
    return report;
  }
  const lines = (r: Report) => renderText(r).split('\n').filter((l) => l.startsWith('  + ') || l.startsWith('  - ')).map((l) => l.slice(4));

  beforeAll(async () => {
    server = await startInProcess();
    client = new HttpClient({ server: server.base, token: adminKey });
    served = { server, values: new Map(), close: async () => {} };
    dir = mkdtempSync(join(tmpdir(), 'teamkeys-access-change-'));
    for (const d of ['src', 'keys', 'policy']) rmSync(join(dir, d), { recursive: true, force: true });
    await import('node:fs').then((fs) => ['src', 'keys', 'policy'].forEach((d) => fs.mkdirSync(join(dir, d))));
    write();
    expect((await run('apply')).outcome).toBe('applied');
    for (const u of ['alice', 'paula', 'pete', 'rita']) await probe(`probe-${u}`, { user: u }, `user:${u}`, { kind: 'user', name: u });
    await probe('probe-eng-leads', { subject: 'probe-eng-leads', groups: ['eng-leads'] }, 'group:eng-leads', { kind: 'subject', name: 'probe-eng-leads' });
    askers.push({ keyName: 'payments-ci', value: readFileSync(join(dir, 'keys/payments-ci.key'), 'utf8').trim(), identity: 'key:payments-ci', owner: { kind: 'team', name: 'payments' } });
  }, 60_000);
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a user added to a team with a role gains what the role gives, through that team', async () => {
    manifests.platform = { ...manifests.platform, users: ['pete', 'alice'] };
    const r = await planAndApply();
    expect(lines(r)).toEqual(['alice gains cluster role teams-viewer (via team platform)', 'alice gains get, list, watch on teams/* (via team platform, role teams-viewer)']);
    expect(r.accessChange).toMatchObject({ identitiesChanged: 1, losses: [] });
  });

  it("a group added to a team's spec.groups: anyone in it gains what the team's rules give its members", async () => {
    manifests.payments = { ...manifests.payments, groups: ['eng-leads'] };
    const r = await planAndApply();
    expect(lines(r)).toEqual([
      'anyone in group eng-leads gains get, list, watch, update, patch, delete on the keys of team payments (via team payments (group eng-leads), access rule self-edit of team payments, may update team payments)',
      'anyone in group eng-leads gains get, update, patch on teams/payments (via team payments (group eng-leads), access rule self-edit of team payments)',
      // A key whose own groups make it more than its subject is an identity of its own.
      'key probe-eng-leads gains get, list, watch, update, patch, delete on the keys of team payments (via team payments (group eng-leads), access rule self-edit of team payments, may update team payments)',
      'key probe-eng-leads gains get, update, patch on teams/payments (via team payments (group eng-leads), access rule self-edit of team payments)',
    ]);
  });

  it('the role a team grants widened (teams-viewer to teams-admin): every member gains writes on every Team, and the keys of every team', async () => {
    manifests.platform = { ...manifests.platform, clusterRoles: [{ name: 'teams-admin' }] };
    const r = await planAndApply();
    const text = lines(r);
    expect(text).toContain('alice gains cluster role teams-admin (via team platform)');
    expect(text).toContain('pete gains create, update, patch, delete, deletecollection on teams/* (via team platform, role teams-admin)');
    expect(text).toContain('pete gains get, list, watch, update, patch, delete on the keys of every team (via team platform, role teams-admin, may update every team)');
    expect(text).toContain('pete loses cluster role teams-viewer (via team platform)');
    // Most powerful first: writes on keys before writes on Teams, within each identity.
    expect(text.findIndex((l) => l.startsWith('pete gains get, update, patch, delete on the keys'))).toBeLessThan(text.findIndex((l) => l.startsWith('pete gains create')));
  });

  it('an access rule naming a user: that user gains its verbs on that Team, and the user it named before loses them', async () => {
    manifests.payments = { ...manifests.payments, access: [(manifests.payments.access as object[])[0], { name: 'readers', verbs: ['get'], users: ['rita'] }] };
    const r = await planAndApply();
    expect(lines(r)).toEqual(['nobody loses get on teams/payments (via access rule readers of team payments)', 'rita gains get on teams/payments (via access rule readers of team payments)']);
  });

  it("a team key's scope widened: the key gains what its team may do that the scope now allows", async () => {
    manifests.ci = { ...manifests.ci, scope: teamsOnly(['get', 'update', 'patch']) };
    const r = await planAndApply();
    expect(lines(r)).toEqual(["team key payments-ci gains update, patch on teams/payments (via team payments, access rule self-edit of team payments)"]);
    expect(renderMarkdown(r)).toContain("### Access change\n\n1 identity gains or loses rights (2 gained, 0 lost; 1 checked). Most powerful first; as the server will decide requests once this plan is applied.\n\n- **team key payments-ci**\n  - gains update, patch on `teams/payments` (via team payments, access rule self-edit of team payments)");
  });

  it("a plan that moves no right says no one's access changes", async () => {
    manifests.platform = { ...manifests.platform, displayName: 'Platform' };
    write();
    const r = await run('plan');
    expect(r.accessChange).toEqual({ identitiesChecked: 0, identitiesChanged: 0, gains: [], losses: [] });
    expect(renderText(r)).toContain("Access: No one's access changes.");
    expect(renderMarkdown(r)).toContain("### Access change\n\nNo one's access changes.");
  });

  it('a CEL policy refusing a management-admin gain fails the plan at the rule, with the change in the report', async () => {
    const rule = ['apiVersion: gitops.management.service/v1', 'kind: Policy', 'metadata: {name: no-new-admins}', 'spec:', '  validations:', "    - expression: \"!access.gains.exists(g, g.resource == 'clusterroles' && g.name == 'management-admin')\"", '      message: no pull request may grant management-admin', ''].join('\n');
    writeFileSync(join(dir, 'policy/admins.yaml'), rule);
    manifests.platform = { ...manifests.platform, clusterRoles: [{ name: 'teams-admin' }, { name: 'management-admin' }] };
    write();
    const r = await run('plan', join(dir, 'policy'));
    expect(r.outcome).toBe('invalid');
    expect(r.errors).toEqual([{ file: expect.stringMatching(/\/policy\/admins\.yaml$/), line: 6, column: 19, message: 'the plan\'s access change violates policy "no-new-admins": no pull request may grant management-admin' }]);
    expect(lines(r)).toContain('alice gains cluster role management-admin (via team platform)');
    // The same rule passes a plan that grants it to no one.
    manifests.platform = { ...manifests.platform, clusterRoles: [{ name: 'teams-admin' }] };
    write();
    expect((await run('plan', join(dir, 'policy'))).outcome).toBe('changes');
  });
});
