/**
 * Found by a review (stop 63): `git cat-file --batch` answers `<sha> missing` for an object the
 * repository lacks and still exits 0. A blobless partial clone (`git clone --filter=blob:none`,
 * actions/checkout's `filter`) holds file contents only for the commit it checked out, so reading
 * another revision read those files as empty, and `plan --prune` deleted their objects with no
 * error. The read now fails, naming the object.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSource } from '../../src/gitops/source/load.js';
import { catBlobs } from '../../src/gitops/source/git-mirror.js';
import { newRepo, type Repo } from './git-repo.js';

const team = (name: string, user: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  users: [${user}]\n`;

describe('a partial clone lacking the files of the revision asked for', () => {
  let origin: Repo;
  let clone: string;
  let first: string;
  beforeAll(async () => {
    origin = await newRepo({ withExamples: false });
    for (const name of ['a1', 'b2', 'c3', 'd4']) origin.write(`teams/${name}.yaml`, team(name, 'ana'));
    first = await origin.commit('four teams');
    origin.write('teams/d4.yaml', team('d4', 'bo'));
    await origin.commit('d4 changes');
    execFileSync('git', ['-C', origin.dir, 'config', 'uploadpack.allowFilter', 'true']);
    clone = mkdtempSync(join(tmpdir(), 'teamkeys-blobless-'));
    execFileSync('git', ['clone', '--quiet', '--filter=blob:none', `file://${origin.dir}`, clone], { stdio: 'pipe' });
  });
  afterAll(() => {
    origin?.cleanup();
    rmSync(clone, { recursive: true, force: true });
  });

  it('fails the read, naming the missing object, instead of reading the file as empty', async () => {
    const read = loadSource({ source: clone, ref: first, path: 'teams' }).then(
      (loaded) => ({ manifests: loaded.manifests.map((m) => m.file), errors: loaded.errors.map((e) => e.message) }),
      (err: Error) => ({ thrown: err.message }),
    );
    const result = await read;
    expect(JSON.stringify(result)).toMatch(/git cat-file could not read [0-9a-f]{40} \([0-9a-f]{40} missing\): the repository lacks the object \(a partial or shallow clone\?\); clone it whole/);
    expect('manifests' in result ? result.manifests.length : 0).not.toBe(3);
  });

  it('reads every object a repository holds, and refuses one it does not', async () => {
    const sha = execFileSync('git', ['-C', origin.dir, 'rev-parse', `${first}:teams/a1.yaml`]).toString().trim();
    expect(await catBlobs(origin.dir, [sha])).toEqual([team('a1', 'ana')]);
    await expect(catBlobs(origin.dir, [sha, 'f'.repeat(40)])).rejects.toThrow(`git cat-file could not read ${'f'.repeat(40)} (${'f'.repeat(40)} missing)`);
  });
});
