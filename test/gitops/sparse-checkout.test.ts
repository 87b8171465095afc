/**
 * Noticed at stop 63, done at stop 64: a folder source reads what is on disk, and a sparse checkout
 * leaves files out of the disk while git still tracks them. Their objects read as removed, and
 * `plan --prune` planned their deletion with no error. The folder reader now refuses manifests the
 * sparse set leaves out below the source folder, naming each; files outside the folder, and the git
 * reader (`--ref`), are unaffected.
 */
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSource } from '../../src/gitops/source/load.js';
import { teamkeys } from '../support/cli.js';
import { newRepo, type Repo } from './git-repo.js';

const team = (name: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  users: [ana]\n`;
const refusal = 'not checked out (the sparse checkout leaves it out)';

describe('a folder source in a sparse checkout', () => {
  let repo: Repo;
  beforeAll(async () => {
    repo = await newRepo({ withExamples: false });
    repo.write('gitops/a/alpha.yaml', team('alpha'));
    repo.write('gitops/b/beta.yaml', team('beta'));
    repo.write('gitops/b/notes.txt', 'not a manifest\n');
    repo.write('elsewhere/gamma.yaml', team('gamma'));
    await repo.commit('three teams');
    execFileSync('git', ['-C', repo.dir, 'sparse-checkout', 'set', 'gitops/a'], { stdio: 'pipe' });
  });
  afterAll(() => repo.cleanup());

  it('refuses the folder, naming each manifest left out below it, instead of reading it as removed', async () => {
    const loaded = await loadSource({ source: repo.dir, path: 'gitops' });
    expect(loaded.manifests).toEqual([]);
    expect(loaded.errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message.slice(0, refusal.length)}`)).toEqual([`gitops/b/beta.yaml:1:1: ${refusal}`]);
    const cli = teamkeys(['validate', '--source', repo.dir, '--path', 'gitops']);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain(`gitops/b/beta.yaml:1:1: ${refusal}`);
    expect(cli.stdout).toContain('git sparse-checkout add');
  });

  it('reads a folder the sparse set holds whole, and the whole tree from git with --ref', async () => {
    const inside = await loadSource({ source: repo.dir, path: 'gitops/a' });
    expect(inside.errors).toEqual([]);
    expect(inside.manifests.map((m) => m.file)).toEqual(['gitops/a/alpha.yaml']);
    const fromGit = await loadSource({ source: repo.dir, ref: 'HEAD', path: 'gitops' });
    expect(fromGit.errors).toEqual([]);
    expect(fromGit.manifests.map((m) => m.file).sort()).toEqual(['gitops/a/alpha.yaml', 'gitops/b/beta.yaml']);
  });
});

// Found by the review of the change above: a folder reached through a link (to elsewhere in the
// repository) was not checked, and its left-out manifests read as removed.
describe('a folder source linking into a sparse part of the repository', () => {
  let repo: Repo;
  beforeAll(async () => {
    repo = await newRepo({ withExamples: false });
    repo.write('gitops/own.yaml', team('own'));
    repo.write('common/a/alpha.yaml', team('alpha'));
    repo.write('common/b/beta.yaml', team('beta'));
    symlinkSync('../common', join(repo.dir, 'gitops/shared'));
    await repo.commit('teams and a link');
  });
  afterAll(() => repo.cleanup());

  it('refuses the manifests the sparse set leaves out behind the link', async () => {
    const full = await loadSource({ source: repo.dir, path: 'gitops' });
    expect(full.errors).toEqual([]);
    expect(full.manifests.map((m) => (m.object.metadata as { name?: string } | undefined)?.name).sort()).toEqual(['alpha', 'beta', 'own']);
    execFileSync('git', ['-C', repo.dir, 'sparse-checkout', 'set', 'gitops', 'common/a'], { stdio: 'pipe' });
    const sparse = await loadSource({ source: repo.dir, path: 'gitops' });
    expect(sparse.manifests).toEqual([]);
    expect(sparse.errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message.slice(0, refusal.length)}`)).toEqual([`common/b/beta.yaml:1:1: ${refusal}`]);
  });
});
