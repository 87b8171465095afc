import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Report } from '../../src/gitops/report/report.js';
import { root, teamkeys } from '../support/cli.js';
import { kubectl, kubectlPath, startServe, type Served } from '../server/serve-process.js';
import { newRepo, type Repo } from './git-repo.js';

const ajv = new Ajv({ allErrors: true, strict: false });
(addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
const validReport = ajv.compile(JSON.parse(readFileSync(join(root, 'schemas/report.schema.json'), 'utf8')) as object);

describe('the reconciler against a running server, from a git repository', () => {
  let served: Served;
  let repo: Repo;
  let reports: string;
  const k = (...args: string[]) => kubectl(served, args);
  const run = (command: string, ...extra: string[]) => {
    const tokenFile = join(served.dir, 'admin.key');
    const r = teamkeys([command, '--source', repo.dir, '--ref', 'main', '--source-id', 'team-repo', '--server', served.url, '--token-file', tokenFile, '--ca-file', join(served.dir, 'tls/cert.pem'), '--report-dir', reports, ...extra]);
    const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
    expect(validReport(report), JSON.stringify(validReport.errors)).toBe(true);
    return { ...r, report, markdown: readFileSync(join(reports, 'report.md'), 'utf8') };
  };
  const versions = () => k('get', 'teams,oak', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}').stdout;
  const object = (r: { report: Report }, name: string) => r.report.objects.find((o) => o.name === name);

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
    repo = await newRepo();
    reports = join(served.dir, 'reports');
  });
  afterAll(async () => {
    await served.stop();
    repo.cleanup();
  });

  it('the first apply creates every object, owned by field manager gitops', () => {
    const r = run('apply', '--key-dir', join(served.dir, 'keys'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.report.outcome).toBe('applied');
    expect(r.report.summary).toMatchObject({ create: 5, failed: 0 });
    expect(r.report.source.revision).toMatch(/^[0-9a-f]{40}$/);
    const team = parse(k('get', 'team', 'platform', '-o', 'yaml', '--show-managed-fields').stdout) as {
      metadata: { annotations: Record<string, string>; managedFields: { manager: string; operation: string }[] };
    };
    expect(team.metadata.managedFields.map((m) => [m.manager, m.operation])).toEqual([['gitops', 'Update']]);
    expect(team.metadata.annotations['gitops.management.service/source']).toBe('team-repo');
    expect(readFileSync(join(served.dir, 'keys/payments-ci.key'), 'utf8')).toMatch(/^tk_[0-9A-Za-z]{49}\n$/);
    expect(JSON.stringify(r.report)).not.toMatch(/tk_[0-9A-Za-z]{49}/);
  });

  it('a second plan reports no changes and writes nothing', () => {
    const before = versions();
    const r = run('plan', '--detailed-exitcode');
    expect(r.code).toBe(0);
    expect(r.report.outcome).toBe('clean');
    expect(r.report.summary.unchanged).toBe(5);
    expect(versions()).toBe(before);
  });

  it('changes by kubectl patch and kubectl edit are drift, attributed to them, and apply restores them', () => {
    expect(k('patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"displayName":"Hacked"}}').code).toBe(0);
    // A real kubectl edit, with an "editor" that changes the display name.
    const edited = kubectl(served, ['edit', 'team', 'payments'], { env: { KUBE_EDITOR: "sed -i -e 's/displayName: Payments/displayName: Edited by hand/'" } });
    expect(edited.stdout.trim()).toBe('team.management.service/payments edited');
    const plan = run('plan', '--detailed-exitcode');
    expect(plan.code).toBe(2);
    expect(plan.report.outcome).toBe('drifted');
    const platform = object(plan, 'platform')!;
    expect(platform).toMatchObject({ action: 'update', drift: true, file: 'teams/platform.yaml', line: 2, column: 1 });
    expect(platform.changes).toEqual([
      {
        path: 'spec.displayName',
        before: 'Hacked',
        after: 'Platform',
        drift: true,
        description: 'changed spec.displayName',
        lastChangedBy: { manager: 'kubectl-patch', operation: 'Update', time: expect.stringMatching(/Z$/), user: 'admin', keyName: 'admin' },
      },
    ]);
    expect(object(plan, 'payments')!.changes).toEqual([
      {
        path: 'spec.displayName',
        before: 'Edited by hand',
        after: 'Payments',
        drift: true,
        description: 'changed spec.displayName',
        lastChangedBy: { manager: 'kubectl-edit', operation: 'Update', time: expect.stringMatching(/Z$/), user: 'admin', keyName: 'admin' },
      },
    ]);
    expect(plan.markdown).toContain(
      '| update (drift) | Team/platform | `teams/platform.yaml:2:1` | **drift**: changed spec.displayName: admin (key admin) via kubectl-patch at ',
    );
    expect(plan.markdown).toContain('`spec.displayName`: `Hacked` → `Platform` | admin (key admin) via kubectl-patch at ');
    expect(plan.stdout).toContain('~ Team/platform [drift]');
    const applied = run('apply');
    expect(applied.code).toBe(0);
    expect(k('get', 'team', 'platform', '-o', 'jsonpath={.spec.displayName}').stdout).toBe('Platform');
    expect(k('get', 'team', 'payments', '-o', 'jsonpath={.spec.displayName}').stdout).toBe('Payments');
    expect(run('plan', '--detailed-exitcode').code).toBe(0);
  });

  it('a field another manager added that git does not mention, and that grants nothing, is left alone', () => {
    expect(k('patch', 'team', 'auditors', '--type=merge', '-p', '{"spec":{"username":"audit-bot"},"metadata":{"labels":{"owner":"bot"}}}').code).toBe(0);
    const plan = run('plan', '--detailed-exitcode');
    expect(plan.code).toBe(0);
    expect(plan.report.outcome).toBe('clean');
    run('apply');
    expect(k('get', 'team', 'auditors', '-o', 'jsonpath={.spec.username} {.metadata.labels.owner}').stdout).toBe('audit-bot bot');
  });

  it('a change in git is applied as a minimal patch, and not called drift', async () => {
    repo.write('teams/auditors.yaml', readFileSync(join(repo.dir, 'teams/auditors.yaml'), 'utf8').replace('Read-only access', 'Read access'));
    await repo.commit('auditors: reword');
    const plan = run('plan', '--detailed-exitcode');
    expect(plan.code).toBe(2);
    expect(object(plan, 'auditors')).toMatchObject({ action: 'update', drift: false });
    expect(object(plan, 'auditors')!.changes[0]).toMatchObject({ path: 'spec.description', drift: false, lastChangedBy: { manager: 'gitops' } });
    expect(run('apply').code).toBe(0);
    expect(k('get', 'team', 'auditors', '-o', 'jsonpath={.spec.description}').stdout).toBe('Read access for the quarterly audit.');
  });

  it('removing a file prunes only with --prune, within --max-prune', async () => {
    repo.remove('accesskeys/ci.yaml');
    await repo.commit('drop ci keys');
    const withoutPrune = run('apply');
    expect(withoutPrune.code).toBe(0);
    expect(withoutPrune.report.objects.filter((o) => o.action === 'skip').map((o) => [o.name, o.reason])).toEqual([
      ['ana-laptop', 'not in the source; pruned only with --prune'],
      ['payments-ci', 'not in the source; pruned only with --prune'],
    ]);
    expect(k('get', 'oak', '-o', 'name').stdout).toContain('payments-ci');
    const tooMany = run('apply', '--prune', '--max-prune', '1');
    expect(tooMany.code).toBe(1);
    expect(tooMany.report.outcome).toBe('refused');
    expect(tooMany.report.refused).toContain('more than --max-prune 1');
    expect(k('get', 'oak', '-o', 'name').stdout).toContain('payments-ci');
    const pruned = run('apply', '--prune');
    expect(pruned.code).toBe(0);
    expect(pruned.report.objects.filter((o) => o.result === 'Deleted').map((o) => o.name)).toEqual(['ana-laptop', 'payments-ci']);
    expect(k('get', 'oak', '-o', 'name').stdout.trim()).toBe('ownedaccesskey.management.service/admin');
  });

  it('an emptied source prunes nothing unless --allow-empty', async () => {
    repo.remove('teams');
    await repo.commit('empty');
    const refused = run('apply', '--prune');
    expect(refused.code).toBe(1);
    expect(refused.report.refused).toContain('the source holds no objects');
    expect(k('get', 'team', 'platform', '-o', 'name').code).toBe(0);
    const allowed = run('apply', '--prune', '--allow-empty');
    expect(allowed.code).toBe(0);
    // Only what this source manages goes: the bootstrap team stays.
    expect(k('get', 'teams', '-o', 'name').stdout.trim()).toBe('team.management.service/admins');
  });

  it('one invalid manifest among many means zero writes, and file:line:col errors', async () => {
    repo.write('teams/ok.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: fine\n');
    repo.write('teams/broken.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: Broken_Name\nspec:\n  users: ana\n');
    await repo.commit('one good, one bad');
    const before = versions();
    const r = run('apply', '--prune', '--allow-empty');
    expect(r.code).toBe(1);
    expect(r.report.outcome).toBe('invalid');
    expect(r.stdout).toContain('teams/broken.yaml:4:9: metadata.name: Invalid value: "Broken_Name"');
    expect(r.stdout).toContain('teams/broken.yaml:6:10: spec.users: Invalid value: "string"');
    expect(r.report.errors.map((e) => [e.file, e.line, e.column])).toEqual([
      ['teams/broken.yaml', 4, 9],
      ['teams/broken.yaml', 6, 10],
    ]);
    expect(versions()).toBe(before);
    expect(k('get', 'team', 'fine').code).toBe(1);
  });
});
