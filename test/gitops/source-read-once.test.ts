/**
 * What a source's readers spend is bounded by what it holds, not by how it links to itself (found by
 * a review, stop 65): a folder or file reached twice (a link to it) is read once by both readers,
 * which therefore agree; a file over 8 MiB, or past a source's 128 MiB, is an error at that file,
 * unread (a sparse 600 MB file, or a blob of zeros that git stores in 3 MB, crashed the readers).
 */
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRepo, type Repo } from './git-repo.js';
import { loadSource } from '../../src/gitops/source/load.js';

const team = (name: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  users: [ana]\n`;

describe('links and sizes, read from the folder and from git alike', () => {
  let repo: Repo;

  beforeAll(async () => {
    repo = await newRepo({ withExamples: false });
    // Nested folders d0/d1/d2, a manifest in each, and a link to each folder from the top.
    let dir = 'gitops';
    for (let d = 0; d < 3; d++) {
      dir = `${dir}/d${d}`;
      repo.write(`${dir}/t${d}.yaml`, team(`t${d}`));
    }
    mkdirSync(join(repo.dir, 'gitops/links'));
    for (let d = 0; d < 3; d++) symlinkSync(`../${['d0', 'd0/d1', 'd0/d1/d2'][d]}`, join(repo.dir, `gitops/links/to-d${d}`));
    // A file reached under two names; a folder reached through a link named before it (the review's
    // case: each reader named them differently), and a link into a hidden folder.
    repo.write('gitops/one.yaml', team('one'));
    symlinkSync('one.yaml', join(repo.dir, 'gitops/also-one.yaml'));
    repo.write('gitops/z/f.yaml', team('f'));
    symlinkSync('z', join(repo.dir, 'gitops/a-link'));
    repo.write('gitops/.hidden/h.yaml', team('h'));
    symlinkSync('.hidden', join(repo.dir, 'gitops/peek'));
    // A link to nothing (the git reader skipped it without a word), and folders linking on 20 deep
    // (the git reader counted hops across folders and stopped at 16).
    symlinkSync('nowhere.yaml', join(repo.dir, 'gitops/dangling.yaml'));
    // Outside the source folder, reached only through the links.
    for (let i = 0; i < 20; i++) {
      repo.write(`chain/c${i}/m${i}.yaml`, team(`m${i}`));
      if (i > 0) symlinkSync(`../c${i}`, join(repo.dir, `chain/c${i - 1}/next`));
    }
    symlinkSync('../chain/c0', join(repo.dir, 'gitops/start'));
    // Over one file's bound: a sparse file (no room on disk; git compresses its zeros to almost nothing).
    writeFileSync(join(repo.dir, 'gitops/huge.yaml'), '');
    truncateSync(join(repo.dir, 'gitops/huge.yaml'), 9 * 1024 * 1024);
    await repo.commit('links and a huge file');
  });
  afterAll(() => repo.cleanup());

  const names = (loaded: Awaited<ReturnType<typeof loadSource>>) => loaded.manifests.map((m) => `${m.file}:${String((m.object.metadata as { name: string }).name)}`).sort();
  /** What both readers find in this repository: each file once, under its own name where it has one; the huge file, the hidden target and the dangling link refused. */
  const expectTheSource = (loaded: Awaited<ReturnType<typeof loadSource>>) => {
    expect(names(loaded)).toEqual([...Array.from({ length: 20 }, (_, i) => `gitops/start/${'next/'.repeat(i)}m${i}.yaml:m${i}`), 'gitops/d0/d1/d2/t2.yaml:t2', 'gitops/d0/d1/t1.yaml:t1', 'gitops/d0/t0.yaml:t0', 'gitops/one.yaml:one', 'gitops/z/f.yaml:f'].sort());
    expect(loaded.errors).toEqual([
      { file: 'gitops/huge.yaml', line: 1, column: 1, message: 'the file is 9437184 bytes, more than the 8 MiB teamkeys reads of one manifest file: not read' },
      { file: 'gitops/peek', line: 1, column: 1, message: 'symbolic link into a hidden file or folder (such as .git): not read' },
      { file: 'gitops/dangling.yaml', line: 1, column: 1, message: 'symbolic link outside the source' },
    ].sort((a, b) => (a.file < b.file ? -1 : 1)));
  };

  it('the folder reader reads each file once, under its own name (links are followed after), and refuses the huge file unread', async () => {
    const loaded = await loadSource({ source: join(repo.dir, 'gitops') });
    expectTheSource(loaded);
  });

  it('a --path that is a link into a hidden folder is refused by both readers, nothing behind it read', async () => {
    const refused = [{ file: 'gitops/peek', line: 1, column: 1, message: 'symbolic link into a hidden file or folder (such as .git): not read' }];
    const folder = await loadSource({ source: join(repo.dir, 'gitops'), path: 'peek' });
    expect([folder.manifests, folder.errors]).toEqual([[], refused]);
    const git = await loadSource({ source: repo.dir, ref: 'HEAD', path: 'gitops/peek' });
    expect([git.manifests, git.errors]).toEqual([[], refused]);
  });

  it('the git reader finds the same, under the same names', async () => {
    const loaded = await loadSource({ source: repo.dir, ref: 'HEAD', path: 'gitops' });
    expectTheSource(loaded);
  });
});

describe("a source's budget", () => {
  it('reads files in order until 128 MiB, each at most 8 MiB; every file past it is an error, unread', async () => {
    const { withinBudget, maxSourceBytes, maxManifestFileBytes } = await import('../../src/gitops/source/read-budget.js');
    const files = Array.from({ length: 20 }, (_, i) => ({ path: `f${String(i).padStart(2, '0')}.yaml`, size: maxManifestFileBytes }));
    files.splice(3, 0, { path: 'big.yaml', size: maxManifestFileBytes + 1 });
    const { read, errors } = withinBudget(files);
    expect(read.map((f) => f.path)).toEqual(files.filter((f) => f.path !== 'big.yaml').slice(0, maxSourceBytes / maxManifestFileBytes).map((f) => f.path));
    expect(errors[0]).toEqual({ file: 'big.yaml', line: 1, column: 1, message: 'the file is 8388609 bytes, more than the 8 MiB teamkeys reads of one manifest file: not read' });
    expect(errors.slice(1).map((e) => e.file)).toEqual(['f16.yaml', 'f17.yaml', 'f18.yaml', 'f19.yaml']);
    expect(errors[1]!.message).toBe("the source's manifest files hold more than the 128 MiB teamkeys reads of one source: not read");
  });
});

describe('an unknown field of a long name', () => {
  it('is named cut to 256 characters, as the server names it', async () => {
    const { parseManifests } = await import('../../src/gitops/source/manifests.js');
    const { validateManifests } = await import('../../src/gitops/validate.js');
    const { resourceModels } = await import('../../src/api/model.js');
    const long = 'x'.repeat(1000);
    const parsed = parseManifests(`apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: t\nspec:\n  ${long}: 1\n`, 'long.yaml');
    const { errors } = validateManifests(parsed.manifests, Object.values(resourceModels('management.service')));
    expect(errors.map((e) => e.message)).toEqual([`unknown field "spec.${'x'.repeat(251)}..."`]);
  });
});

describe('a SHA-256 repository', () => {
  it('of 700 manifests is read from git whole (the size check budgets each object by its name, 64 characters here)', async () => {
    const { execFileSync } = await import('node:child_process');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-sha256-'));
    try {
      const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.email=t@teamkeys.dev', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', ...args], { stdio: 'pipe' });
      git('init', '--quiet', '--object-format=sha256');
      mkdirSync(join(dir, 'teams'));
      for (let i = 0; i < 700; i++) writeFileSync(join(dir, `teams/t${i}.yaml`), team(`t${i}`));
      git('add', '.');
      git('commit', '--quiet', '-m', 'teams');
      const loaded = await loadSource({ source: dir, ref: 'HEAD' });
      expect(loaded.errors).toEqual([]);
      expect(loaded.manifests).toHaveLength(700);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('git processes a source costs', () => {
  it('a revision of 200 links to files reads with a handful of git processes, not two per link (a review: 1,600 links took 15 s)', async () => {
    const { execFileSync } = await import('node:child_process');
    const { chmodSync, mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-links-'));
    const shim = mkdtempSync(join(tmpdir(), 'teamkeys-git-shim-'));
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const log = join(shim, 'calls');
    writeFileSync(join(shim, 'git'), `#!/bin/sh\necho "$@" >> '${log}'\nexec '${realGit}' "$@"\n`);
    chmodSync(join(shim, 'git'), 0o755);
    const path = process.env.PATH;
    try {
      const git = (...args: string[]) => execFileSync(realGit, ['-C', dir, '-c', 'user.email=t@teamkeys.dev', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', ...args], { stdio: 'pipe' });
      git('init', '--quiet');
      mkdirSync(join(dir, 't'));
      mkdirSync(join(dir, 'l'));
      for (let i = 0; i < 200; i++) {
        writeFileSync(join(dir, `t/t${i}.yaml`), team(`t${i}`));
        symlinkSync(`../t/t${i}.yaml`, join(dir, `l/l${i}.yaml`));
      }
      git('add', '.');
      git('commit', '--quiet', '-m', 'links');
      process.env.PATH = `${shim}:${path}`;
      const loaded = await loadSource({ source: dir, ref: 'HEAD', path: 'l' });
      process.env.PATH = path;
      expect(loaded.errors).toEqual([]);
      expect(loaded.manifests).toHaveLength(200);
      const calls = readFileSync(log, 'utf8').trim().split('\n');
      expect(calls.length, calls.join('\n')).toBeLessThan(20);
    } finally {
      process.env.PATH = path;
      rmSync(dir, { recursive: true, force: true });
      rmSync(shim, { recursive: true, force: true });
    }
  }, 60_000);
});
