/**
 * Git owns who has access (issue 19) and a removal is drift (issue 14, point 1), over a served
 * process: hand-made grants are drift named by person from the audit trail, apply removes them,
 * the report-only daemon reports and leaves them, --self-heal removes them; replace means equal.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Report, ReportObject } from '../../src/gitops/report/report.js';
import { eventually, startWatch, type Watcher } from '../daemon/watch-process.js';
import { root, teamkeys } from '../support/cli.js';
import { kubectl, kubectlPath, kubeconfigWithToken, startServe, type Served } from '../server/serve-process.js';
import { newRepo, type Repo } from './git-repo.js';

const ajv = new Ajv({ allErrors: true, strict: false });
(addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
const validReport = ajv.compile(JSON.parse(readFileSync(join(root, 'schemas/report.schema.json'), 'utf8')) as object);

const olgaKey = 'OlgaLaptopKey0123456789abcdefghijklmnopqrstuvwxyz';
const opsTeam = `apiVersion: management.service/v1
kind: Team
metadata: {name: ops}
spec: {users: [olga], clusterRoles: [{name: teams-admin}, {name: teams-viewer}]}
---
apiVersion: management.service/v1
kind: OwnedAccessKey
metadata: {name: olga-laptop}
spec: {user: olga, key: ${olgaKey}}
`;

describe('git owns who has access: hand-made grants and removals are drift, named by person', () => {
  let served: Served;
  let repo: Repo;
  let olga: string;
  const watchers: Watcher[] = [];
  const k = (...args: string[]) => kubectl(served, args);
  const target = () => ['--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')];
  const run = (command: string, ...extra: string[]) => {
    const reports = join(served.dir, 'reports');
    const r = teamkeys([command, '--source', repo.dir, '--ref', 'main', '--source-id', 'team-repo', ...target(), '--report-dir', reports, ...extra]);
    const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
    expect(validReport(report), JSON.stringify(validReport.errors)).toBe(true);
    return { ...r, report, markdown: readFileSync(join(reports, 'report.md'), 'utf8') };
  };
  const auditors = (r: { report: Report }) => r.report.objects.find((o) => o.name === 'auditors')!;
  const change = (o: ReportObject, path: string) => o.changes.find((c) => c.path === path);
  const team = () => parse(k('get', 'team', 'auditors', '-o', 'yaml').stdout) as { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: Record<string, unknown> };
  // Olga (a teams-admin) adds a member first: once the team grants management-admin, she may not.
  const grantByHand = () => {
    const added = kubectl(served, ['patch', 'team', 'auditors', '--type=json', '-p', '[{"op":"add","path":"/spec/users/-","value":"mallory"}]'], { kubeconfig: olga });
    expect(added.stderr).toBe('');
    expect(k('patch', 'team', 'auditors', '--type=merge', '-p', '{"spec":{"clusterRoles":[{"name":"teams-viewer"},{"name":"management-admin"}]}}').code).toBe(0);
  };
  const daemon = async (reports: string, ...extra: string[]) => {
    const w = await startWatch(['--source', repo.dir, '--ref', 'main', '--source-id', 'team-repo', '--interval', '1h', '--report-dir', reports, ...target(), ...extra]);
    watchers.push(w);
    await eventually('the daemon is ready', async () => (await fetch(`${w.url}/readyz`)).status === 200, 20_000);
    return w;
  };
  /** The daemon's latest report once it holds the auditors team. */
  const daemonReport = (dir: string) =>
    eventually('the daemon wrote its report', () => {
      if (!existsSync(join(dir, 'report.json'))) return undefined;
      const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
      return report?.objects.some((o) => o.name === 'auditors') ? report : undefined;
    }, 15_000);

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
    repo = await newRepo();
    expect(kubectl(served, ['create', '-f', '-'], { input: opsTeam }).code).toBe(0);
    olga = kubeconfigWithToken(served, olgaKey, 'olga');
    expect(run('apply').code).toBe(0);
  });
  afterAll(async () => {
    for (const w of watchers) await w.stop();
    await served.stop();
    repo.cleanup();
  });

  it('a role and a member added by hand are drift in plan (exit 2), named with the person and key', () => {
    grantByHand();
    // A label a bot adds grants nothing: still not drift.
    expect(k('label', 'team', 'auditors', 'reviewed-by=bot').code).toBe(0);
    const plan = run('plan', '--detailed-exitcode');
    expect(plan.code).toBe(2);
    expect(plan.report.outcome).toBe('drifted');
    const o = auditors(plan);
    expect(o).toMatchObject({ action: 'update', drift: true });
    expect(change(o, 'spec.users')).toMatchObject({
      before: ['carla', 'mallory'],
      after: ['carla'],
      drift: true,
      description: 'added `"mallory"` to spec.users',
      lastChangedBy: { manager: 'kubectl-patch', user: 'olga', keyName: 'olga-laptop', time: expect.stringMatching(/Z$/) },
    });
    expect(change(o, 'spec.clusterRoles')).toMatchObject({
      after: [{ name: 'teams-viewer' }],
      drift: true,
      description: 'added `{"name":"management-admin"}` to spec.clusterRoles',
      lastChangedBy: { manager: 'kubectl-patch', user: 'admin', keyName: 'admin' },
    });
    expect(o.changes.map((c) => c.path)).toEqual(['spec.clusterRoles', 'spec.users']);
    expect(plan.stdout).toMatch(/drift: added `"mallory"` to spec.users: olga \(key olga-laptop\) via kubectl-patch at \d{4}-\d\d-\d\dT[\d:]+Z/);
    expect(plan.markdown).toContain('**drift**: added `mallory` to spec.users: olga (key olga-laptop) via kubectl-patch at');
    expect(plan.stdout).toContain('Plan: 0 to create, 1 to update');
  });

  it('a caller the audit trail refuses (403) still sees the drift, named by field manager', () => {
    const tokenFile = join(served.dir, 'olga.key');
    writeFileSync(tokenFile, `${olgaKey}\n`);
    const plan = run('plan', '--detailed-exitcode', '--token-file', tokenFile);
    expect(plan.code).toBe(2);
    const users = change(auditors(plan), 'spec.users')!;
    expect(users).toMatchObject({ drift: true, description: 'added `"mallory"` to spec.users', lastChangedBy: { manager: 'kubectl-patch', operation: 'Update' } });
    expect(users.lastChangedBy!.user).toBeUndefined();
    expect(plan.stdout).toMatch(/drift: added `"mallory"` to spec.users: kubectl-patch \(Update\) at /);
  });

  it('the report-only daemon reports the grants and leaves them; apply removes both and keeps the label', async () => {
    const reports = join(served.dir, 'daemon-report-only');
    const w = await daemon(reports);
    const report = await daemonReport(reports);
    expect(report.outcome).toBe('drifted');
    expect(auditors({ report })).toMatchObject({ action: 'skip', drift: true, reason: 'drift reported, not reverted (run with --self-heal to revert it)' });
    expect(change(auditors({ report }), 'spec.users')!.lastChangedBy).toMatchObject({ user: 'olga', keyName: 'olga-laptop' });
    await w.stop();
    expect(team().spec.users).toEqual(['carla', 'mallory']);

    const applied = run('apply');
    expect(applied.code).toBe(0);
    expect(applied.report.outcome).toBe('applied');
    expect(applied.stdout).toContain('Created 0, updated 1, replaced 0, deleted 0');
    expect(team().spec).toMatchObject({ users: ['carla'], clusterRoles: [{ name: 'teams-viewer' }] });
    expect(team().metadata.labels).toEqual({ department: 'security', 'reviewed-by': 'bot' });
    const again = run('plan', '--detailed-exitcode');
    expect([again.code, again.report.outcome]).toEqual([0, 'clean']);
  });

  it('with --self-heal the daemon removes hand-made grants', async () => {
    grantByHand();
    await daemon(join(served.dir, 'daemon-heal'), '--self-heal');
    await eventually('the grants are gone', () => JSON.stringify(team().spec.clusterRoles) === '[{"name":"teams-viewer"}]' && JSON.stringify(team().spec.users) === '["carla"]', 15_000);
  });

  it('a field another writer removed is drift: plan names the writer, the report-only daemon leaves it removed', async () => {
    for (const w of watchers.splice(0)) await w.stop();
    expect(k('patch', 'team', 'auditors', '--type=merge', '-p', '{"spec":{"description":null}}').code).toBe(0);
    const plan = run('plan', '--detailed-exitcode');
    expect(plan.code).toBe(2);
    expect(change(auditors(plan), 'spec.description')).toMatchObject({
      after: 'Read-only access for the quarterly audit.',
      drift: true,
      description: 'removed spec.description',
      lastChangedBy: { manager: 'kubectl-patch', user: 'admin', keyName: 'admin' },
    });
    const reports = join(served.dir, 'daemon-removal');
    const w = await daemon(reports);
    const report = await daemonReport(reports);
    expect(auditors({ report })).toMatchObject({ action: 'skip', drift: true });
    expect(report.outcome).toBe('drifted');
    await w.stop();
    expect(team().spec.description).toBeUndefined();
    expect(run('apply').code).toBe(0);
    expect(team().spec.description).toBe('Read-only access for the quarterly audit.');
  });

  it('a field git adds is a change from git, not drift, though others wrote the object since', async () => {
    repo.write('teams/auditors.yaml', readFileSync(join(repo.dir, 'teams/auditors.yaml'), 'utf8').replace('  displayName: Auditors\n', '  displayName: Auditors\n  username: auditors\n'));
    await repo.commit('auditors: a username');
    const plan = run('plan', '--detailed-exitcode');
    expect(plan.code).toBe(2);
    expect(plan.report.outcome).toBe('changes');
    expect(change(auditors(plan), 'spec.username')).toMatchObject({ after: 'auditors', drift: false });
    expect(run('apply').code).toBe(0);
  });

  it('sync-strategy replace leaves exactly git spec, labels and annotations, and the plan lists each field that goes', async () => {
    expect(k('annotate', 'team', 'auditors', 'note=by-hand').code).toBe(0);
    expect(k('patch', 'team', 'auditors', '--type=merge', '-p', '{"spec":{"displayName":"Hand","groups":["contractors"]}}').code).toBe(0);
    const file = join(repo.dir, 'teams/auditors.yaml');
    repo.write('teams/auditors.yaml', readFileSync(file, 'utf8').replace('  labels:\n', '  annotations:\n    gitops.management.service/sync-strategy: replace\n  labels:\n'));
    await repo.commit('auditors: replace');
    const plan = run('plan', '--detailed-exitcode');
    expect(plan.code).toBe(2);
    const o = auditors(plan);
    expect(o.action).toBe('replace');
    expect(o.changes.map((c) => c.path)).toEqual([
      'metadata.annotations.gitops.management.service/sync-strategy',
      'metadata.annotations.note',
      'metadata.labels.reviewed-by',
      'spec.displayName',
      'spec.groups',
    ]);
    expect(change(o, 'metadata.annotations.gitops.management.service/sync-strategy')).toEqual({ path: 'metadata.annotations.gitops.management.service/sync-strategy', after: 'replace', drift: false });
    expect(plan.stdout).toContain('metadata.annotations.gitops.management.service/sync-strategy: (unset) -> "replace"');
    expect(run('apply').code).toBe(0);
    const live = team();
    const git = parse(readFileSync(file, 'utf8')) as { metadata: { labels: object; annotations: object }; spec: object };
    expect(live.spec).toEqual(git.spec);
    expect(live.metadata.labels).toEqual(git.metadata.labels);
    expect(live.metadata.annotations).toEqual({ ...git.metadata.annotations, 'gitops.management.service/source': 'team-repo' });
    expect(run('plan', '--detailed-exitcode').code).toBe(0);
  });
});
