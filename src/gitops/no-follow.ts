/**
 * Files the reconciler writes or removes in a folder someone else may control (a pull request's
 * checkout: report-dir, plan-file, --key-dir, and their cleanup): never through a symbolic link
 * planted there, neither in the file's place nor as any folder on its way. Node has no openat, so
 * the folder is held by its real path: every folder from the anchor down is checked with lstat
 * (created one at a time where missing, never with mkdir -p, which follows links), and its real
 * path is checked again before the file is renamed into place. A new file is created beside the
 * target with O_CREAT | O_EXCL | O_NOFOLLOW and renamed over it; rename replaces the entry itself,
 * so a link in the target's place is replaced, not followed.
 *
 * The anchor is the working directory (in CI the checkout, which a pull request controls): no folder
 * below it may be a link. A path outside it is checked from where it leaves the working directory's
 * path (/var/lib/teamkeys from /home/ci/repo: /var, /var/lib, ...), so a link anywhere on it is
 * refused, a system one (macOS's /tmp) included: give the real path there.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, rename, rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * A file that cannot be written without following a link: the message names the path. It reads
 * as the system error O_NOFOLLOW gives (ELOOP on a named path), which callers report as the user's to fix.
 */
export class NoFollowError extends Error {
  readonly code = 'ELOOP';
  readonly syscall = 'open';
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

const exclusive = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Writes `text` to a new file that must not exist yet, following no link, with `mode`. */
export async function writeExclusive(path: string, text: string, mode: number): Promise<void> {
  const handle = await open(path, exclusive, mode);
  try {
    await handle.writeFile(text);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

const below = (folder: string, path: string) => {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
};

/** Where the check starts (the working directory unless given), and what a refusal asks for. */
export interface FolderCheck {
  anchor?: string;
  fix?: string;
}

/** The folders to check for `dir`, outermost first: those below the anchor, or below what the path shares with the working directory. */
function foldersOf(dir: string, anchor?: string): string[] {
  const path = resolve(dir);
  let top = resolve(anchor ?? process.cwd());
  while (top !== path && !below(top, path) && dirname(top) !== top) top = dirname(top);
  const chain: string[] = [];
  for (let at = path; at !== top && dirname(at) !== at; at = dirname(at)) chain.unshift(at);
  return chain;
}

/** Throws NoFollowError when `dir`, or a folder on its way (see foldersOf), is a symbolic link. */
export async function refuseLinkedFolder(dir: string, what: string, opts: FolderCheck = {}): Promise<void> {
  for (const at of foldersOf(dir, opts.anchor)) {
    const info = await lstat(at).catch(() => undefined);
    if (!info) return;
    if (info.isSymbolicLink()) {
      throw new NoFollowError(at === resolve(dir) ? `${what} ${dir} is a symbolic link: ${opts.fix ?? 'give the real folder'}` : `${what} ${dir} is reached through a symbolic link, ${at}: give a path with no link on it`, dir);
    }
  }
}

/** Creates `dir` and the folders above it that are missing, one at a time, refusing any link on the way; returns its real path. */
export async function mkdirNoFollow(dir: string, what: string, mode = 0o755, opts: FolderCheck = {}): Promise<string> {
  await refuseLinkedFolder(dir, what, opts);
  for (const at of foldersOf(dir, opts.anchor)) {
    // Only what is missing is made: a folder that exists (a read-only /usr) is not asked again.
    if (await lstat(at).then(() => true, () => false)) continue;
    await mkdir(at, { mode }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
  // Checked again once it all exists: a link put in place of a folder meanwhile is refused too.
  await refuseLinkedFolder(dir, what, opts);
  return realpath(dir);
}

/** The folder of `file`, held: its real path, re-checked before the file is renamed or removed. */
async function holdFolder(file: string): Promise<() => Promise<void>> {
  const dir = dirname(file);
  const what = `${file}: the folder`;
  await refuseLinkedFolder(dir, what);
  const held = await realpath(dir);
  return async () => {
    const now = await realpath(dir).catch(() => undefined);
    if (now !== held) throw new NoFollowError(`${what} ${dir} changed while the file was written (now ${now ?? 'gone'}): nothing was written`, dir);
    await refuseLinkedFolder(dir, what);
  };
}

/** Writes (or replaces) `file` without following a link at its place or on its way (the folder must exist). */
export async function writeNoFollow(file: string, text: string, mode = 0o644): Promise<void> {
  const check = await holdFolder(file);
  const temporary = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeExclusive(temporary, text, mode);
    await check();
    await rename(temporary, file);
  } finally {
    await rm(temporary, { force: true });
  }
}

/** Removes `file` (or the link in its place) when it is there, never through a link on its way. */
export async function removeNoFollow(file: string): Promise<void> {
  if (!(await lstat(dirname(file)).then(() => true, () => false))) return;
  const check = await holdFolder(file);
  await check();
  await rm(file, { force: true });
}
