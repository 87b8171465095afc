/**
 * One bare mirror per git source, kept between runs (the daemon keeps them in its state
 * directory): the first run clones it, later runs fetch into it, and the wanted revision is read
 * straight from its object store, so nothing is checked out and an unchanged revision costs one fetch.
 * Only branches and tags are mirrored (not `git clone --mirror`, which on GitHub also pulls every
 * pull request's refs); another ref or a bare commit is fetched when asked for.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { simpleGit } from 'simple-git';
import { normalizeGitUrl } from './git-url.js';
import { maxManifestFileBytes } from './read-budget.js';

/** The mirror's folder for a remote: readable name plus a hash of the normalized address. */
export function mirrorPath(root: string, url: string): string {
  const normalized = normalizeGitUrl(url);
  const name = basename(normalized).replace(/[^A-Za-z0-9._-]/g, '_') || 'repo';
  return join(root, `${name}-${createHash('sha256').update(normalized).digest('hex').slice(0, 12)}.git`);
}

const refspecs = ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'];

/** Clones the mirror on first use, else fetches into it (branches, tags, deletions). Returns its folder. */
export async function updateMirror(root: string, url: string): Promise<string> {
  const dir = mirrorPath(root, url);
  await removeAbandonedClones(root, dir);
  if (await stat(join(dir, 'HEAD')).then(() => true, () => false)) {
    const git = simpleGit(dir);
    // The address may carry a token that was rotated since the clone. Written only when it changed:
    // a config.lock left by a process killed while writing it failed every later run (a review).
    const current = await git.raw(['config', '--get', 'remote.origin.url']).then((u) => u.trim(), () => undefined);
    if (current !== url) await git.remote(['set-url', 'origin', url]);
    await git.fetch(['--prune', '--quiet', 'origin', ...refspecs]);
    return dir;
  }
  await mkdir(root, { recursive: true, mode: 0o700 });
  const partial = `${partialOf(dir)}${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  try {
    await simpleGit().clone(url, partial, ['--bare', '--quiet']);
    await rm(dir, { recursive: true, force: true });
    await rename(partial, dir);
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  return dir;
}

/**
 * Removes the clones of this mirror that a process no longer running left half done (killed
 * mid-clone): each was a full-size copy, left for good, one per restart in a crash loop (found by a
 * review). A clone whose process still runs is its own, as is one of another host. Asked at every run (one folder read), as a
 * run after the crash loop may find the mirror cloned.
 */
async function removeAbandonedClones(root: string, dir: string): Promise<void> {
  // Only this host's: a process id means nothing in another container sharing the state folder
  // (found by the next review: another's clone under way looked abandoned).
  const prefix = basename(partialOf(dir));
  for (const name of await readdir(root).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || running(pid)) continue;
    await rm(join(root, name), { recursive: true, force: true });
  }
}

/** A clone under way of the mirror `dir`, but for its process id: it carries this host's name, whose process ids they are. */
const partialOf = (dir: string): string => `${dir}.partial-${hostname().replace(/[^A-Za-z0-9.]/g, '_') || 'host'}-`;

/** Whether a process with this id runs (one we may not signal runs too). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The commit a branch, tag, commit or HEAD names; a ref the mirror does not hold (a pull request's, a commit on no branch) is fetched. */
export async function resolveRevision(dir: string, ref: string): Promise<string> {
  const git = simpleGit(dir);
  const local = await git.revparse(['--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]).catch(() => '');
  if (local.trim()) return local.trim();
  await git.fetch(['--quiet', 'origin', '--end-of-options', ref]);
  return (await git.revparse(['--verify', '--end-of-options', 'FETCH_HEAD^{commit}'])).trim();
}

/**
 * The commit `ref` names on origin, fetched whatever the local repository holds: a local branch of
 * the same name (one the job made, or a stale one in a reused workspace) is never read. A shallow
 * repository fetches just that commit.
 */
export async function resolveOriginRevision(dir: string, ref: string): Promise<string> {
  const git = simpleGit(dir);
  const shallow = (await git.revparse(['--is-shallow-repository']).catch(() => 'false')).trim() === 'true';
  await git.fetch(['--quiet', ...(shallow ? ['--depth=1'] : []), 'origin', '--end-of-options', ref]);
  return (await git.revparse(['--verify', '--end-of-options', 'FETCH_HEAD^{commit}'])).trim();
}

/** Each blob's size, through one `git cat-file --batch-check` process (nothing of the blobs is read). */
export async function blobSizes(dir: string, shas: string[]): Promise<number[]> {
  if (shas.length === 0) return [];
  // A line per object: its name (40 or, in a SHA-256 repository, 64 characters), type and size.
  const out = await catFile(dir, '--batch-check', shas, shas.reduce((n, sha) => n + sha.length + 40, 4096));
  const lines = out.toString('utf8').split('\n');
  return shas.map((sha, i) => {
    const m = /^([0-9a-f]+) blob (\d+)$/.exec(lines[i] ?? '');
    if (!m || m[1] !== sha) throw new Error(`git cat-file could not read ${sha} (${(lines[i] ?? '').trim() || 'no answer'}): the repository lacks the object (a partial or shallow clone?); clone it whole`);
    return Number(m[2]);
  });
}

/**
 * `git cat-file <mode>` of the objects, its whole answer; at most `maxBytes` of it: past that the
 * process is stopped and the read refused (a blob of 600 MB crashed the reader, found by a review).
 */
function catFile(dir: string, mode: string, shas: string[], maxBytes: number): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', ['-C', dir, 'cat-file', mode], { stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) {
        over = true;
        child.kill();
      } else chunks.push(c);
    });
    child.stderr.on('data', (c: Buffer) => (stderr = `${stderr}${c.toString()}`.slice(-4096)));
    child.on('error', reject);
    child.on('close', (code) => {
      if (over) return reject(new Error(`git cat-file answered more than ${maxBytes} bytes for ${shas.length} object(s): not read`));
      if (code !== 0) return reject(new Error(`git cat-file failed: ${stderr.trim()}`));
      resolvePromise(Buffer.concat(chunks));
    });
    child.stdin.on('error', () => {}); // a child stopped early closes its input
    child.stdin.end(`${shas.join('\n')}\n`);
  });
}

/**
 * Reads many blobs through one `git cat-file --batch` process, at most `maxBytes` of them in all
 * (default: one manifest file's bound; readTree asks their sizes first and passes their sum).
 */
export async function catBlobs(dir: string, shas: string[], maxBytes = maxManifestFileBytes): Promise<string[]> {
  if (shas.length === 0) return [];
  const out = await catFile(dir, '--batch', shas, maxBytes + 128 * shas.length);
  const texts: string[] = [];
  let at = 0;
  for (let i = 0; i < shas.length; i++) {
    const nl = out.indexOf(0x0a, at);
    const header = out.subarray(at, nl < 0 ? out.length : nl).toString('utf8');
    // `<sha> blob <size>`, or `<sha> missing` for an object the repository lacks (a blobless
    // partial clone's mirror): git still exits 0. Read as an empty file, its manifests were
    // pruned without an error (found by a review), so anything but a blob header fails the read.
    const m = /^([0-9a-f]+) blob (\d+)$/.exec(header);
    if (nl < 0 || !m || m[1] !== shas[i]) throw new Error(`git cat-file could not read ${shas[i]} (${header.trim() || 'no answer'}): the repository lacks the object (a partial or shallow clone?); clone it whole`);
    const size = Number(m[2]);
    if (nl + 1 + size > out.length) throw new Error(`git cat-file answered ${shas[i]} short`);
    texts.push(out.subarray(nl + 1, nl + 1 + size).toString('utf8'));
    at = nl + 1 + size + 1;
  }
  return texts;
}
