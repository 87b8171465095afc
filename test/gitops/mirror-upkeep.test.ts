/**
 * The daemon's git mirrors over restarts and crashes (found by a review): a clone a killed process
 * left half done was a full-size copy left for good, one per restart in a crash loop; and every
 * run rewrote the mirror's config for the remote's address, so a `config.lock` left by a process
 * killed while writing it failed every later run until removed by hand.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mirrorPath, updateMirror } from '../../src/gitops/source/git-mirror.js';
import { newRepo, type Repo } from './git-repo.js';

describe('git mirrors kept between runs', () => {
  let repo: Repo;
  const root = mkdtempSync(join(tmpdir(), 'teamkeys-mirrors-'));
  beforeAll(async () => {
    repo = await newRepo();
    await repo.commit('examples');
  });
  afterAll(() => {
    repo.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  it("a clone left by a process no longer running is removed when the mirror is cloned; one whose process runs is kept", async () => {
    const dir = mirrorPath(root, repo.dir);
    const host = hostname().replace(/[^A-Za-z0-9.]/g, '_');
    // A process that has exited, one that runs (this test's parent), and a clone of another host
    // (another container sharing the state folder: its process ids are not this host's).
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    const names = [`${host}-${gone}`, `${host}-${process.ppid}`, `other-host-${gone}`].map((n) => `${dir}.partial-${n}`);
    for (const name of names) {
      mkdirSync(`${name}/objects`, { recursive: true });
      writeFileSync(`${name}/objects/pack`, 'x'.repeat(1000));
    }
    expect(await updateMirror(root, repo.dir)).toBe(dir);
    expect(names.map((n) => existsSync(n))).toEqual([false, true, true]);
    expect(readdirSync(root).length).toBe(3);
    // One found once the mirror is there goes at the next fetch.
    mkdirSync(names[0]!);
    await updateMirror(root, repo.dir);
    expect(existsSync(names[0]!)).toBe(false);
    for (const name of names) rmSync(name, { recursive: true, force: true });
  });

  it('a stale config.lock does not fail the next fetch of the same address', async () => {
    const dir = await updateMirror(root, repo.dir);
    writeFileSync(join(dir, 'config.lock'), '');
    repo.write('teams/new.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: new\nspec:\n  users: [ana]\n');
    const head = await repo.commit('a new team');
    expect(await updateMirror(root, repo.dir)).toBe(dir);
    const fetched = spawnSync('git', ['-C', dir, 'rev-parse', 'refs/heads/main'], { encoding: 'utf8' }).stdout.trim();
    expect(fetched).toBe(head);
  });
});
