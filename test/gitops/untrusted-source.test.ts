/**
 * Issue 24, point 11: a source from a pull request never leads the loader outside its root. Real
 * folders, real links, real git repositories: a link (file or folder, or the --path itself)
 * resolving outside the source, or to nothing, is an error at the link, and nothing of what is
 * outside (file names, kinds, names) reaches the errors; a link inside is followed.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSource } from '../../src/gitops/source/load.js';
import { formatError } from '../../src/gitops/source/manifests.js';
import { teamkeys } from '../support/cli.js';
import { newRepo, type Repo } from './git-repo.js';

const team = (name: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  users: [ana]\n`;

describe('the source loader never leaves the source root', () => {
  let work: string;
  let outside: string;
  let repo: Repo;
  const errorsOf = async (source: string, path?: string, ref?: string) => (await loadSource({ source, ...(path ? { path } : {}), ...(ref ? { ref } : {}) })).errors.map(formatError);

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'teamkeys-untrusted-'));
    // What a pull request must not read: another team's manifests, a file with a telling name.
    outside = join(work, 'outside');
    mkdirSync(join(outside, 'finance-secrets'), { recursive: true });
    writeFileSync(join(outside, 'finance-secrets/hidden-team.yaml'), team('hidden-team'));
    writeFileSync(join(outside, 'private.yaml'), 'apiVersion: v1\nkind: Secret\nmetadata: {name: db-password}\n');
    repo = await newRepo({ withExamples: false });
    repo.write('gitops/teams/platform.yaml', team('platform'));
    repo.write('shared/auditors.yaml', team('auditors'));
  });
  afterAll(() => {
    repo.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it.each([
    ['a file link to a manifest outside', 'gitops/teams/evil.yaml', () => join(outside, 'private.yaml')],
    ['a folder link to a folder outside', 'gitops/teams/more', () => join(outside, 'finance-secrets')],
    ['a relative link climbing out', 'gitops/up.yaml', () => '../../outside/private.yaml'],
    ['a link to nothing (answered as a link outside: what exists there is not told)', 'gitops/gone.yaml', () => join(outside, 'no-such-file.yaml')],
  ])('%s is refused at the link, nothing outside echoed', async (_what, link, target) => {
    symlinkSync(target(), join(repo.dir, link));
    try {
      const errors = await errorsOf(join(repo.dir, 'gitops'));
      // Files are named from the repository root (gitops.md), wherever the source folder is in it.
      const shown = link;
      expect(errors).toEqual([`${shown}:1:1: symbolic link outside the source`]);
      expect(errors.join('\n')).not.toMatch(/hidden-team|db-password|Secret|private|finance/);
      // The CLI says the same and exits 1.
      const r = teamkeys(['validate', '--source', join(repo.dir, 'gitops')]);
      expect(r.code).toBe(1);
      expect(`${r.stdout}${r.stderr}`).toContain(`${shown}:1:1: symbolic link outside the source`);
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/hidden-team|db-password|Secret|private|finance/);
    } finally {
      rmSync(join(repo.dir, link), { force: true });
    }
  });

  it("a link into the repository's .git (its config can hold a token) is refused at the link, and nothing of it is read", async () => {
    await repo.git.addConfig('http.https://github.com/.extraheader', 'AUTHORIZATION: basic c2VjcmV0LXRva2Vu');
    symlinkSync('../.git/config', join(repo.dir, 'gitops/leak.yaml'));
    symlinkSync('../.git', join(repo.dir, 'gitops/dotgit'));
    try {
      const errors = await errorsOf(join(repo.dir, 'gitops'));
      expect(errors).toEqual(['gitops/dotgit:1:1: symbolic link into a hidden file or folder (such as .git): not read', 'gitops/leak.yaml:1:1: symbolic link into a hidden file or folder (such as .git): not read']);
      expect(errors.join('\n')).not.toMatch(/AUTHORIZATION|c2VjcmV0|extraheader/);
    } finally {
      rmSync(join(repo.dir, 'gitops/leak.yaml'), { force: true });
      rmSync(join(repo.dir, 'gitops/dotgit'), { force: true });
    }
  });

  it('a --path that is a link out of the source is refused, and what is there is not read', async () => {
    symlinkSync(outside, join(repo.dir, 'gitops/prod'));
    try {
      expect(await errorsOf(join(repo.dir, 'gitops'), 'prod')).toEqual(['gitops/prod:1:1: symbolic link outside the source']);
      const r = teamkeys(['validate', '--source', join(repo.dir, 'gitops'), '--path', 'prod']);
      expect(r.code).toBe(1);
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/hidden-team|db-password|finance/);
      expect(await errorsOf(join(repo.dir, 'gitops'), '../../outside')).toEqual(['../outside:1:1: the folder is outside the source']);
    } finally {
      rmSync(join(repo.dir, 'gitops/prod'), { force: true });
    }
  });

  it('links inside the source are followed (named where the link is); a link loop ends', async () => {
    symlinkSync('../shared', join(repo.dir, 'gitops/shared'));
    symlinkSync('..', join(repo.dir, 'gitops/teams/loop'));
    try {
      const loaded = await loadSource({ source: repo.dir, path: 'gitops' });
      expect(loaded.errors).toEqual([]);
      expect(loaded.manifests.map((m) => `${m.file} ${(m.object.metadata as { name: string }).name}`)).toEqual(['gitops/shared/auditors.yaml auditors', 'gitops/teams/platform.yaml platform']);
    } finally {
      rmSync(join(repo.dir, 'gitops/shared'), { force: true });
      rmSync(join(repo.dir, 'gitops/teams/loop'), { force: true });
    }
  });

  it('a git source: a committed link out of the repository is refused, one inside is followed', async () => {
    symlinkSync('../../../outside/private.yaml', join(repo.dir, 'gitops/teams/evil.yaml'));
    symlinkSync('../shared', join(repo.dir, 'gitops/shared'));
    const revision = await repo.commit('links');
    try {
      const loaded = await loadSource({ source: repo.dir, ref: revision, path: 'gitops' });
      expect(loaded.errors.map(formatError)).toEqual(['gitops/teams/evil.yaml:1:1: symbolic link outside the source']);
      expect(loaded.manifests.map((m) => m.file)).toEqual(['gitops/shared/auditors.yaml', 'gitops/teams/platform.yaml']);
    } finally {
      repo.remove('gitops/teams/evil.yaml');
      repo.remove('gitops/shared');
      await repo.commit('no links');
    }
  });

  it('a git source whose --path is a committed link out of the repository is refused', async () => {
    symlinkSync('/etc', join(repo.dir, 'etc-link'));
    const revision = await repo.commit('a link to /etc');
    try {
      expect(await errorsOf(repo.dir, 'etc-link', revision)).toEqual(['etc-link:1:1: symbolic link outside the source']);
    } finally {
      repo.remove('etc-link');
      await repo.commit('no link');
    }
  });
});
