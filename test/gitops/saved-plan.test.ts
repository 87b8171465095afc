import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SavedPlan } from '../../src/gitops/saved/saved-plan.js';
import { teamkeys } from '../support/cli.js';
import { kubectl, startServe, type Served } from '../server/serve-process.js';
import { newRepo, type Repo } from './git-repo.js';

describe('saved plans: plan --out, apply --plan', () => {
  let served: Served;
  let repo: Repo;
  let work: string;
  let revision: string;
  const k = (...args: string[]) => kubectl(served, args);
  const target = () => ['--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')];
  const plan = (file: string) => teamkeys(['plan', '--source', repo.dir, '--ref', 'main', '--source-id', 'saved', ...target(), '--out', join(work, file)], { cwd: work });
  // Applying needs no source at all: run from an empty folder.
  const apply = (file: string, ...extra: string[]) => teamkeys(['apply', '--plan', join(work, file), ...target(), '--report-dir', join(work, 'report'), ...extra], { cwd: mkdtempSync(join(work, 'empty-')) });
  const versions = () => k('get', 'teams,oak', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}').stdout;
  const saved = (file: string) => JSON.parse(readFileSync(join(work, file), 'utf8')) as SavedPlan;

  beforeAll(async () => {
    served = await startServe();
    repo = await newRepo();
    revision = (await repo.git.revparse(['HEAD'])).trim();
    work = mkdtempSync(join(tmpdir(), 'teamkeys-saved-'));
  });
  afterAll(async () => {
    await served.stop();
    repo.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it('plan --out writes the plan with what it read, and no secret', () => {
    const r = plan('first.json');
    expect(r.stderr).toBe(`Saved the plan to ${join(work, 'first.json')}; apply exactly it with: teamkeys apply --plan ${join(work, 'first.json')}\n`);
    expect(r.code).toBe(0);
    const file = saved('first.json');
    expect(file).toMatchObject({ apiVersion: 'teamkeys/v1', kind: 'SavedPlan', formatVersion: 2, target: served.url, targetApiVersion: 'management.service/v1', source: { id: 'saved', revision } });
    expect(file.checksum).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(file.actions.map((a) => `${a.type} ${a.kind}/${a.name}`)).toEqual(['create Team/auditors', 'create Team/payments', 'create Team/platform', 'create OwnedAccessKey/ana-laptop', 'create OwnedAccessKey/payments-ci']);
    expect(file.reads.map((r) => `${r.kind}/${r.name} ${r.absent ? 'absent' : r.resourceVersion}`)).toContain('Team/platform absent');
    expect(file.objects).toHaveLength(5);
    const text = readFileSync(join(work, 'first.json'), 'utf8');
    expect(text).not.toContain(served.adminKey);
    expect(text).not.toMatch(/"key"\s*:/);
  });

  it('apply --plan applies exactly that plan, with no source; generated keys go to --key-dir only', () => {
    const r = apply('first.json', '--key-dir', join(work, 'keys'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Created 5, updated 0');
    expect(readFileSync(join(work, 'keys/payments-ci.key'), 'utf8')).toMatch(/^tk_[0-9A-Za-z]{49}\n$/);
    expect(readFileSync(join(work, 'report/report.json'), 'utf8')).toContain(revision);
    expect(k('get', 'team', 'platform', '-o', 'jsonpath={.metadata.annotations.gitops\\.management\\.service/source}').stdout).toBe('saved');
  });

  it('a plan made before someone changed an object it read is refused whole, the object named', async () => {
    repo.write('teams/auditors.yaml', readFileSync(join(repo.dir, 'teams/auditors.yaml'), 'utf8').replace('Read-only access', 'Read access'));
    repo.write('teams/platform.yaml', readFileSync(join(repo.dir, 'teams/platform.yaml'), 'utf8').replace('displayName: Platform', 'displayName: Platform team'));
    await repo.commit('reword');
    expect(plan('second.json').code).toBe(0);
    expect(saved('second.json').actions.filter((a) => a.type === 'update').map((a) => a.name)).toEqual(['auditors', 'platform']);
    expect(k('patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"description":"changed by hand"}}').code).toBe(0);
    const before = versions();
    const r = apply('second.json');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('refused: the plan is stale, nothing was written: Team/platform changed since the plan (resourceVersion');
    expect(r.stdout).not.toContain('Team/auditors changed');
    expect(versions()).toBe(before);
    expect(k('get', 'team', 'auditors', '-o', 'jsonpath={.spec.description}').stdout).toContain('Read-only access');
  });

  it('an object that appeared since the plan makes it stale too', async () => {
    repo.write('teams/newcomers.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: newcomers\nspec:\n  displayName: From git\n');
    await repo.commit('newcomers');
    expect(plan('third.json').code).toBe(0);
    expect(saved('third.json').reads.find((r) => r.name === 'newcomers')).toEqual({ kind: 'Team', plural: 'teams', name: 'newcomers', absent: true });
    const created = kubectl(served, ['create', '-f', '-'], { input: 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: newcomers\nspec:\n  displayName: By hand\n' });
    expect(created.code).toBe(0);
    const r = apply('third.json');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Team/newcomers was created since the plan');
    expect(k('get', 'team', 'newcomers', '-o', 'jsonpath={.spec.displayName}').stdout).toBe('By hand');
  });

  it('a plan file edited after plan wrote it is refused at the file, nothing written', () => {
    k('delete', 'team', 'newcomers');
    expect(plan('fourth.json').code).toBe(0);
    const file = saved('fourth.json');
    const create = file.actions.find((a) => a.name === 'newcomers')!;
    (create.body!.spec as Record<string, unknown>).clusterRoles = [{ name: 'management-admin' }];
    writeFileSync(join(work, 'edited.json'), JSON.stringify(file));
    const r = apply('edited.json');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${join(work, 'edited.json')}:1:1: the plan file was changed after teamkeys plan wrote it (its checksum does not match)`);
    expect(k('get', 'team', 'newcomers').code).not.toBe(0);
    // The untouched file still applies, and the next plan is clean.
    expect(apply('fourth.json').code).toBe(0);
    expect(teamkeys(['plan', '--source', repo.dir, '--ref', 'main', '--source-id', 'saved', ...target(), '--detailed-exitcode']).code).toBe(0);
  });

  it('a status write since the plan (key activity) does not make it stale', async () => {
    repo.write('accesskeys/ci.yaml', readFileSync(join(repo.dir, 'accesskeys/ci.yaml'), 'utf8').replace('ttl: 2592000', 'ttl: 1296000'));
    await repo.commit('shorter ttl');
    expect(plan('fifth.json').code).toBe(0);
    const before = k('get', 'oak', 'payments-ci', '-o', 'jsonpath={.metadata.resourceVersion}').stdout;
    expect(k('patch', 'oak', 'payments-ci', '--subresource=status', '--type=merge', '-p', '{"status":{"lastActivity":"2026-01-02T03:04:05Z"}}').code).toBe(0);
    expect(k('get', 'oak', 'payments-ci', '-o', 'jsonpath={.metadata.resourceVersion}').stdout).not.toBe(before);
    const r = apply('fifth.json');
    expect(r.code).toBe(0);
    expect(k('get', 'oak', 'payments-ci', '-o', 'jsonpath={.spec.ttl}').stdout).toBe('1296000');
  });

  it('flags that a saved plan fixed are refused at apply time', () => {
    const r = apply('first.json', '--source', repo.dir, '--prune');
    expect(r.code).toBe(1); // every error is 1: 2 means "changes" (issue 14)
    expect(r.stderr).toBe('error: --plan applies the saved plan as it was reviewed: --source, --prune were fixed when it was made\n');
  });

  it('a plan that is refused or invalid is not saved', async () => {
    writeFileSync(join(work, 'stale.json'), 'left from an earlier run');
    repo.write('teams/broken.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: broken\nspec:\n  users: ana\n');
    await repo.commit('broken');
    const r = plan('stale.json');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no plan was saved to ${join(work, 'stale.json')}: the plan is invalid`);
    expect(() => readFileSync(join(work, 'stale.json'))).toThrow();
  });
});
