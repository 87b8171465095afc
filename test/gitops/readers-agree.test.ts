/**
 * The two source readers agree on generated layouts of folders, files and symbolic links: the
 * folder reader (the system resolves each link) and the git reader (links resolved from git's
 * objects, nothing checked out) find the same manifests under the same names and the same errors.
 * A pull request is read by the git reader in CI and by the folder reader in a checkout; where they
 * differ, one of them reads what the other refuses. Links point anywhere the generator can spell:
 * through other links, `..` after a link, loops, absolute paths, hidden folders, nothing.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadSource } from '../../src/gitops/source/load.js';

/** Every folder is made, each holding a file git keeps (git stores no empty folder; the system would follow a link into one). */
const folders = ['a', 'b', 'a/c', 'b/d', '.h'];
const names = ['f.yaml', 'g.yml', 'l', 'm.yaml', 'n'];
const parts = ['..', '.', 'a', 'b', 'c', 'd', '.h', 'f.yaml', 'g.yml', 'l', 'm.yaml', 'n', 'x', ''];

interface Planted {
  dir: string;
  name: string;
  link?: string | null;
}

const planted = fc.record({
  dir: fc.constantFrom('', ...folders),
  name: fc.constantFrom(...names),
  link: fc.option(
    fc.tuple(fc.boolean(), fc.array(fc.constantFrom(...parts), { minLength: 1, maxLength: 4 })).map(([absolute, p]) => (absolute && p.length === 1 ? `/${p[0]}` : p.join('/'))),
    { freq: 2 },
  ),
});

const team = (name: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  users: [ana]\n`;

/** Lays the entries out in `dir` (the first of each path wins). */
function layout(dir: string, entries: Planted[]): void {
  for (const f of folders) {
    mkdirSync(join(dir, f), { recursive: true });
    writeFileSync(join(dir, f, 'keep'), '');
  }
  const made = new Set<string>();
  entries.forEach((e, i) => {
    const path = join(e.dir, e.name);
    if (made.has(path) || e.link === '') return;
    made.add(path);
    if (e.link === undefined || e.link === null) writeFileSync(join(dir, path), team(`t${i}`));
    else symlinkSync(e.link, join(dir, path));
  });
}

const found = (loaded: Awaited<ReturnType<typeof loadSource>>) => ({
  manifests: loaded.manifests.map((m) => `${m.file}: ${String((m.object.metadata as { name: string }).name)}`),
  errors: loaded.errors.map((e) => `${e.file}: ${e.message}`),
});

/** Builds a repository with `build`, commits it, and reads it below `path` with both readers: what each found. */
async function readBoth(build: (dir: string) => void, path?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-readers-'));
  try {
    build(dir);
    const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.email=t@teamkeys.dev', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', ...args], { stdio: 'pipe' });
    git('init', '--quiet');
    git('add', '-A');
    git('commit', '--quiet', '--allow-empty', '-m', 'layout');
    const at = path ? { path } : {};
    return { folder: found(await loadSource({ source: dir, ...at })), git: found(await loadSource({ source: dir, ref: 'HEAD', ...at })) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the folder reader and the git reader', () => {
  it('agree on generated layouts of links', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(planted, { minLength: 1, maxLength: 12 }), fc.option(fc.constantFrom('a', 'b', 'l', 'n', 'a/l', 'b/n'), { freq: 3 }), async (entries, path) => {
        const read = await readBoth((dir) => layout(dir, entries), path ?? undefined);
        expect(read.git).toEqual(read.folder);
      }),
      { numRuns: Number(process.env.READERS_RUNS ?? 20), interruptAfterTimeLimit: Number(process.env.READERS_MS ?? 30_000), ...(process.env.TEAMKEYS_TEST_SEED ? { seed: Number(process.env.TEAMKEYS_TEST_SEED) } : {}) },
    );
  }, 600_000);

  it('resolve a link through another link, and `..` after a link, as the system does (a review: git read them by their text)', async () => {
    const read = await readBoth((dir) => {
      for (const f of ['src', 'a', 'b']) mkdirSync(join(dir, f));
      writeFileSync(join(dir, 'b/f.yaml'), team('b-f'));
      writeFileSync(join(dir, 'c.yaml'), team('top-c'));
      writeFileSync(join(dir, 'a/c.yaml'), team('a-c'));
      symlinkSync('../b', join(dir, 'a/l'));
      // Through the link a/l: git looked for the text a/l/f.yaml and found nothing.
      symlinkSync('../a/l/f.yaml', join(dir, 'src/via.yaml'));
      // `..` after the link climbs from b, to the top: git took a/l/.. for a, and read another file.
      symlinkSync('../a/l/../c.yaml', join(dir, 'src/up.yaml'));
    }, 'src');
    const expected = { manifests: ['src/up.yaml: top-c', 'src/via.yaml: b-f'], errors: [] };
    expect(read).toEqual({ folder: expected, git: expected });
  });

  it('follow a chain of 40 links and refuse one of 41, as the system does (git stopped at 16)', async () => {
    const read = await readBoth((dir) => {
      mkdirSync(join(dir, 'src'));
      mkdirSync(join(dir, 'c'));
      writeFileSync(join(dir, 'c/end.yaml'), team('end'));
      // c/l2 -> c/l3 -> ... -> c/l41 -> c/end.yaml; src/forty.yaml (itself a link) meets 40 links, src/forty-one.yaml 41.
      for (let i = 2; i <= 41; i++) symlinkSync(i === 41 ? 'end.yaml' : `l${i + 1}`, join(dir, `c/l${i}`));
      symlinkSync('../c/l3', join(dir, 'src/forty.yaml'));
      symlinkSync('../c/l2', join(dir, 'src/forty-one.yaml'));
    }, 'src');
    const expected = { manifests: ['src/forty.yaml: end'], errors: ['src/forty-one.yaml: symbolic link outside the source'] };
    expect(read).toEqual({ folder: expected, git: expected });
  });

  it('count the links a folder is reached through, as the system does: 40 folders linking on, not 45', async () => {
    const read = await readBoth((dir) => {
      // s/n -> f1, f1/n -> f2, ... f44/n -> f45: f40 is reached through 40 links, f41 through 41.
      mkdirSync(join(dir, 's'));
      symlinkSync('../f1', join(dir, 's/n'));
      for (let i = 1; i <= 45; i++) {
        mkdirSync(join(dir, `f${i}`));
        writeFileSync(join(dir, `f${i}/t.yaml`), team(`f${i}`));
        if (i < 45) symlinkSync(`../f${i + 1}`, join(dir, `f${i}/n`));
      }
    }, 's');
    expect(read.folder.manifests).toHaveLength(40);
    expect(read.folder.errors).toEqual([`s/${'n/'.repeat(40)}n: symbolic link outside the source`]);
    expect(read.git).toEqual(read.folder);
  });
});
