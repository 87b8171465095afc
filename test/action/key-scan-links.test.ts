/**
 * The Action's scan of a pull request's changed files for key values (changed-files.ts) followed a
 * symbolic link the pull request committed (stat and readFile both follow it), so it read files
 * outside the checkout and reported where in them a key is (found by a review): `notes.txt:3:7` for a link to a file
 * the runner holds (a key file another step wrote, /proc/self/environ with INPUT_TOKEN). Every other
 * reader refuses such a link at the link, reading nothing behind it (gitops.md).
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/api/key-format.js';
import { keysInChangedFiles } from '../../src/github-action/changed-files.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';

describe('the changed-files key scan and links out of the checkout', () => {
  let repo: Repo;
  let outside: string;
  let base: string;

  beforeAll(async () => {
    outside = mkdtempSync(join(tmpdir(), 'teamkeys-outside-'));
    // A file outside the checkout, holding a key on its third line.
    writeFileSync(join(outside, 'deploy.env'), `# deploy\nHOST=x\nTOKEN=${generateKey()}\n`);
    repo = await newRepo({ withExamples: false });
    base = (await repo.git.revparse(['HEAD'])).trim();
    symlinkSync(join(outside, 'deploy.env'), join(repo.dir, 'notes.txt'));
    await repo.commit('pull request: a link');
  });
  afterAll(() => {
    repo.cleanup();
    rmSync(outside, { recursive: true, force: true });
  });

  it('reads nothing behind the link (no finding at a line of the outside file)', async () => {
    const { errors } = await keysInChangedFiles(repo.dir, base);
    expect(errors.filter((e) => e.line === 3)).toEqual([]);
    // The same key in a committed file of the change is still found.
    repo.write('deploy.env', `# deploy\nHOST=x\nTOKEN=${generateKey()}\n`);
    await repo.commit('and a key in a file');
    expect((await keysInChangedFiles(repo.dir, base)).errors.map((e) => `${e.file}:${e.line}`)).toEqual(['deploy.env:3']);
  });
});
