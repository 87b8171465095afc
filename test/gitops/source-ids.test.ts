/**
 * Source ids over a real server: a default id names the repository (its origin, normalized) and the
 * path within it, so two folders named `manifests` never prune each other, a CI checkout and a
 * laptop clone agree, a folder outside git must be named to prune, and objects carrying an id of
 * the old default are adopted or reported, never silently dropped or pruned.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleGit } from 'simple-git';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { teamkeys } from '../support/cli.js';
import { kubectl, kubectlPath, startServe, type Served } from '../server/serve-process.js';
import { newRepo, type Repo } from './git-repo.js';

const team = (name: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  displayName: ${name}\n`;
const sourceAnnotation = 'gitops.management.service/source';

describe('source ids', () => {
  let served: Served;
  const repos: Repo[] = [];
  const k = (...args: string[]) => kubectl(served, args);
  const annotationOf = (name: string) => k('get', 'team', name, '-o', `jsonpath={.metadata.annotations.gitops\\.management\\.service/source}`).stdout;
  const exists = (name: string) => k('get', 'team', name, '-o', 'name').code === 0;
  const run = (command: string, folder: string, ...extra: string[]) => {
    const r = teamkeys([command, '--source', folder, '--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem'), '--output', 'json', ...extra]);
    return { ...r, report: r.stdout ? (JSON.parse(r.stdout) as Report) : undefined };
  };
  /** A repository with `manifests/` holding these teams, and this origin (none when undefined). */
  const repoWith = async (origin: string | undefined, ...teams: string[]) => {
    const repo = await newRepo({ withExamples: false });
    repos.push(repo);
    for (const t of teams) repo.write(`manifests/${t}.yaml`, team(t));
    await repo.commit('teams');
    if (origin) await repo.git.addRemote('origin', origin);
    return repo;
  };

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
  });
  afterAll(async () => {
    await served.stop();
    for (const r of repos) r.cleanup();
  });

  it('two folders named manifests, both applied with --prune, do not prune each other', async () => {
    const one = await repoWith('git@github.com:acme/one.git', 'one-a', 'one-b');
    const two = await repoWith('https://github.com/acme/two', 'two-a');
    const first = run('apply', join(one.dir, 'manifests'), '--prune');
    expect(first.code, first.stderr).toBe(0);
    expect(first.report!.source.id).toBe('github.com/acme/one/manifests');
    const second = run('apply', join(two.dir, 'manifests'), '--prune');
    expect(second.code, second.stderr).toBe(0);
    expect(second.report!.source.id).toBe('github.com/acme/two/manifests');
    expect(second.report!.summary).toMatchObject({ create: 1, delete: 0 });
    const again = run('apply', join(one.dir, 'manifests'), '--prune');
    expect(again.report!.summary).toMatchObject({ unchanged: 2, delete: 0 });
    expect(['one-a', 'one-b', 'two-a'].map(exists)).toEqual([true, true, true]);
    expect(annotationOf('one-a')).toBe('github.com/acme/one/manifests');
    expect(annotationOf('two-a')).toBe('github.com/acme/two/manifests');
  });

  it('a CI checkout (https with a token) and a laptop clone (ssh) of one repository agree, and the token stays out', async () => {
    const laptop = await repoWith('git@github.com:Acme/Shared.git', 'shared-a');
    const ci = await repoWith('https://x-access-token:ghs_secret123@GitHub.com/Acme/Shared', 'shared-a');
    expect(run('apply', join(laptop.dir, 'manifests'), '--prune').code).toBe(0);
    const plan = run('plan', join(ci.dir, 'manifests'), '--prune', '--detailed-exitcode');
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.report!.source.id).toBe('github.com/Acme/Shared/manifests');
    expect(plan.stdout).not.toContain('ghs_secret123');
  });

  it('a clone and the repository it was cloned from agree on the id', async () => {
    const original = await repoWith(undefined, 'cloned-a');
    const cloneDir = mkdtempSync(join(tmpdir(), 'teamkeys-clone-'));
    try {
      await simpleGit().clone(original.dir, cloneDir);
      const fromOriginal = run('plan', join(original.dir, 'manifests'));
      const fromClone = run('plan', join(cloneDir, 'manifests'));
      expect(fromOriginal.report!.source.id).toBe(`${realpathSync(original.dir)}/manifests`);
      expect(fromClone.report!.source.id).toBe(fromOriginal.report!.source.id);
      // Read as git (a ref), the clone still names the same repository.
      expect(run('plan', cloneDir, '--ref', 'HEAD', '--path', 'manifests').report!.source.id).toBe(fromOriginal.report!.source.id);
    } finally {
      rmSync(cloneDir, { recursive: true, force: true });
    }
  });

  it('a folder outside git prunes only with --source-id, and says so', () => {
    const folder = mkdtempSync(join(tmpdir(), 'teamkeys-plain-'));
    try {
      mkdirSync(join(folder, 'manifests'));
      writeFileSync(join(folder, 'manifests', 'plain.yaml'), team('plain-a'));
      const refused = run('apply', join(folder, 'manifests'), '--prune');
      expect(refused.code).toBe(1);
      expect(refused.report!.outcome).toBe('refused');
      expect(refused.report!.refused).toMatch(/is not in a git work tree, so nothing names it the same way on the next run: pruning needs an explicit id \(--source-id NAME\)/);
      expect(exists('plain-a')).toBe(false);
      const named = run('apply', join(folder, 'manifests'), '--prune', '--source-id', 'plain');
      expect(named.code, named.stderr).toBe(0);
      expect(annotationOf('plain-a')).toBe('plain');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('after an upgrade, objects carrying the old default id (the folder name) are adopted when git describes them and never pruned', async () => {
    const repo = await repoWith('git@github.com:acme/legacy.git', 'legacy-kept', 'legacy-gone');
    // What an earlier version wrote: the folder's base name as the id.
    expect(run('apply', join(repo.dir, 'manifests'), '--source-id', 'manifests').code).toBe(0);
    repo.remove('manifests/legacy-gone.yaml');
    await repo.commit('one team less');
    const r = run('apply', join(repo.dir, 'manifests'), '--prune');
    expect(r.code, r.stderr).toBe(0);
    expect(annotationOf('legacy-kept')).toBe('github.com/acme/legacy/manifests');
    expect(exists('legacy-gone')).toBe(true);
    const gone = r.report!.objects.find((o) => o.name === 'legacy-gone')!;
    expect(gone).toMatchObject({ action: 'skip' });
    expect(gone.reason).toMatch(/annotated with "manifests", a former default id of this source \(now "github.com\/acme\/legacy\/manifests"\): not pruned.*--source-id "manifests"/);
    expect(k('get', 'team', 'legacy-gone', '-o', 'jsonpath={.metadata.annotations}').stdout).toContain(`"${sourceAnnotation}":"manifests"`);
  });

  it('objects carrying the repo//path default of earlier versions are adopted, and never pruned', async () => {
    const repo = await repoWith('git@github.com:acme/slashes.git', 'slashes-kept', 'slashes-gone');
    expect(run('apply', join(repo.dir, 'manifests'), '--source-id', 'github.com/acme/slashes//manifests').code).toBe(0);
    repo.remove('manifests/slashes-gone.yaml');
    await repo.commit('one team less');
    const r = run('apply', join(repo.dir, 'manifests'), '--prune');
    expect(r.code, r.stderr).toBe(0);
    expect(r.report!.source.id).toBe('github.com/acme/slashes/manifests');
    expect(annotationOf('slashes-kept')).toBe('github.com/acme/slashes/manifests');
    expect(exists('slashes-gone')).toBe(true);
    expect(r.report!.objects.find((o) => o.name === 'slashes-gone')).toMatchObject({ action: 'skip' });
  });
});
