import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { createRegistry } from '../../src/registry/registry.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { SqliteAuditTrail } from '../../src/store/audit/sqlite-audit-trail.js';
import { teamkeys } from '../support/cli.js';
import { startServe } from '../server/serve-process.js';
import { newRepo, type Repo } from './git-repo.js';

describe('the reconciler on the embedded store', () => {
  let repo: Repo;
  let dir: string;
  let store: string;
  const run = (command: string, ...extra: string[]) => {
    const r = teamkeys([command, '--source', repo.dir, '--source-id', 'emb', '--store', `sqlite:${store}`, '--output', 'json', ...extra]);
    return { ...r, report: JSON.parse(r.stdout || '{}') as Report };
  };
  /** Another writer on the same SQLite file, as a second process would be. */
  const other = async <T>(fn: (r: ReturnType<typeof createRegistry>) => Promise<T>): Promise<T> => {
    const s = new SqliteStore(store);
    try {
      return await fn(createRegistry(s));
    } finally {
      await s.close();
    }
  };

  beforeAll(async () => {
    repo = await newRepo();
    dir = mkdtempSync(join(tmpdir(), 'teamkeys-emb-'));
    store = join(dir, 'db');
  });
  afterAll(() => {
    repo.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies, then plans clean with nothing written', async () => {
    expect(run('apply').code).toBe(0);
    const revision = await other((r) => r.store.currentRevision());
    const plan = run('plan', '--detailed-exitcode');
    expect(plan.code).toBe(0);
    expect(plan.report.summary.unchanged).toBe(5);
    expect(await other((r) => r.store.currentRevision())).toBe(revision);
    // The writes are in the store's audit trail, under the local user who ran the command.
    const trail = new SqliteAuditTrail(store);
    const events = await trail.list({ resource: 'teams' });
    await trail.close();
    expect(events.map((e) => [e.verb, e.objectRef.name, e.user.username, e.fieldManager]).sort()).toEqual(
      ['auditors', 'payments', 'platform'].map((name) => ['create', name, `local:${userInfo().username}`, 'gitops']),
    );
  });

  it('reports are deterministic: the same input gives the same bytes but for generatedAt', async () => {
    await other((r) => r.teams.patch('platform', 'merge', { spec: { displayName: 'X' } }, { fieldManager: 'script' }));
    const strip = (s: string) => s.replace(/"generatedAt": "[^"]+"/, '');
    const a = run('plan');
    const b = run('plan');
    expect(strip(a.stdout)).toBe(strip(b.stdout));
    expect(a.report.objects[0]!.changes[0]).toMatchObject({ path: 'spec.displayName', before: 'X', after: 'Platform', drift: true, lastChangedBy: { manager: 'script' } });
    const md1 = teamkeys(['plan', '--source', repo.dir, '--source-id', 'emb', '--store', `sqlite:${store}`, '--output', 'markdown']).stdout;
    const md2 = teamkeys(['plan', '--source', repo.dir, '--source-id', 'emb', '--store', `sqlite:${store}`, '--output', 'markdown']).stdout;
    expect(md1).toBe(md2);
    expect(run('apply').code).toBe(0);
  });

  it('honours ignore-fields and the replace sync strategy', async () => {
    repo.write(
      'teams/tuned.yaml',
      [
        'apiVersion: management.service/v1',
        'kind: Team',
        'metadata:',
        '  name: tuned',
        '  annotations:',
        '    gitops.management.service/ignore-fields: spec.description',
        '    gitops.management.service/sync-strategy: replace',
        'spec:',
        '  displayName: Tuned',
        '  description: from git',
        '',
      ].join('\n'),
    );
    expect(run('apply').code).toBe(0);
    await other((r) => r.teams.patch('tuned', 'merge', { spec: { description: 'by hand', displayName: 'Changed' } }, { fieldManager: 'script' }));
    const plan = run('plan');
    const tuned = plan.report.objects.find((o) => o.name === 'tuned')!;
    expect(tuned.action).toBe('replace');
    expect(tuned.changes.map((c) => c.path)).toEqual(['spec.displayName']);
    expect(run('apply').code).toBe(0);
    const live = await other((r) => r.teams.get('tuned'));
    expect(live.spec).toEqual({ displayName: 'Tuned', description: 'by hand' });
  });

  it('never prunes an object marked prune: disabled, or one another source manages', async () => {
    await other((r) => r.teams.patch('auditors', 'merge', { metadata: { annotations: { 'gitops.management.service/prune': 'disabled' } } }, { fieldManager: 'script' }));
    await other((r) =>
      r.teams.create({ metadata: { name: 'theirs', annotations: { 'gitops.management.service/source': 'another-repo' } } }, { fieldManager: 'script' }),
    );
    repo.remove('teams/auditors.yaml');
    const plan = run('plan', '--prune');
    expect(plan.report.objects.find((o) => o.name === 'auditors')).toMatchObject({ action: 'skip', reason: 'not in the source; pruning disabled by gitops.management.service/prune' });
    expect(plan.report.objects.find((o) => o.name === 'theirs')).toBeUndefined();
    repo.write('teams/theirs.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: theirs\n');
    expect(run('plan').report.objects.find((o) => o.name === 'theirs')).toMatchObject({ action: 'skip', reason: 'managed by another source (another-repo)' });
    repo.remove('teams/theirs.yaml');
  });

  it('refuses keys in plain text and keys of teams that exist nowhere', () => {
    repo.write('accesskeys/bad.yaml', 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: leaked\nspec:\n  user: ana\n  key: ' + 'L'.repeat(40) + '\n');
    const leaked = run('plan');
    expect(leaked.code).toBe(1);
    expect(leaked.report.errors[0]).toMatchObject({ file: 'accesskeys/bad.yaml', line: 7, column: 8 });
    expect(leaked.report.errors[0]!.message).toContain('spec.key must not be kept in git');
    expect(leaked.stdout).not.toContain('L'.repeat(40));
    repo.write('accesskeys/bad.yaml', 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: orphan\nspec:\n  team: nowhere\n');
    const orphan = run('plan');
    expect(orphan.code).toBe(1);
    expect(orphan.report.errors[0]).toMatchObject({ file: 'accesskeys/bad.yaml', line: 6, column: 9, message: 'spec.team: team "nowhere" exists neither in the source nor on the server' });
    repo.remove('accesskeys/bad.yaml');
  });

  it('validate checks files and folders offline', () => {
    repo.write('extra/typo.yaml', 'apiVersion: management.service/v1\nkind: Tem\nmetadata:\n  name: x\n');
    const r = teamkeys(['validate', join(repo.dir, 'extra')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('typo.yaml:2:7: unknown kind "Tem" in "management.service/v1"');
    // validate plans nothing, and says nothing about planning.
    expect(r.stdout).toContain('1 error(s) in the manifests.\n');
    expect(r.stdout).not.toMatch(/plan/i);
    repo.remove('extra');
    expect(teamkeys(['validate', '--source', repo.dir]).stdout.trim()).toMatch(/^The manifests are valid: checked \d+ objects \(\d+ OwnedAccessKeys, \d+ Teams\) from source \S+ \(.+\)\.$/);
    const md = teamkeys(['validate', '--source', repo.dir, '--output', 'markdown']).stdout;
    expect(md).toContain('## teamkeys validate: valid');
    expect(md).not.toMatch(/unchanged|no changes|→/);
  });

  it('reads a git URL at a ref and a sub-path', async () => {
    repo.write('clusters/prod/teams/prod.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: prod-team\n');
    const sha = await repo.commit('prod folder');
    const r = teamkeys(['plan', '--source', `file://${repo.dir}`, '--ref', 'main', '--path', 'clusters/prod', '--store', `sqlite:${store}`, '--output', 'json']);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.source).toEqual({ id: `${repo.dir}/clusters/prod`, description: `file://${repo.dir}@main`, revision: sha });
    // Files are named from the repository root, as CI annotations need them.
    expect(report.objects.map((o) => [o.action, o.name, o.file])).toEqual([['create', 'prod-team', 'clusters/prod/teams/prod.yaml']]);
    const missing = teamkeys(['plan', '--source', `file://${repo.dir}`, '--ref', 'no-such-branch', '--store', `sqlite:${store}`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(new RegExp(`^error: cannot read git source file://${repo.dir} at no-such-branch: .+\\n$`));
  });
});

describe('the reconciler drives a server serving another API group', () => {
  it('plans and applies with --api-group over HTTP', async () => {
    const served = await startServe(['--api-group', 'teams.example.io']);
    const repo = await newRepo({ withExamples: false });
    try {
      repo.write('t.yaml', 'apiVersion: teams.example.io/v1\nkind: Team\nmetadata:\n  name: elsewhere\nspec:\n  users: [ana]\n');
      await repo.commit('one team');
      const args = ['--source', repo.dir, '--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem'), '--api-group', 'teams.example.io'];
      const applied = teamkeys(['apply', ...args]);
      expect(applied.stderr).toBe('');
      expect(applied.stdout).toContain('+ Team/elsewhere -> Created');
      expect(teamkeys(['plan', ...args, '--detailed-exitcode']).code).toBe(0);
      const wrongGroup = teamkeys(['plan', ...args.slice(0, -1), 'management.service']);
      expect(wrongGroup.code).toBe(1);
      expect(wrongGroup.stdout).toContain('unknown kind "Team" in "teams.example.io/v1"');
      expect(readFileSync(join(served.dir, 'admin.key'), 'utf8')).not.toBe('');
    } finally {
      await served.stop();
      repo.cleanup();
    }
  });
});
