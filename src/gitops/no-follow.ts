/**
 * Files the reconciler writes into a folder someone else may control (a pull request's checkout:
 * report-dir, plan-file, --key-dir): never written through a symbolic link planted there. A new
 * file is created beside the target with O_CREAT | O_EXCL | O_NOFOLLOW and renamed over it;
 * rename replaces the entry itself, so a link in the target's place is replaced, not followed.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

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

/** Throws NoFollowError when `dir` is a symbolic link (a planted `teamkeys-report -> /elsewhere`). */
export async function refuseLinkedFolder(dir: string, what: string): Promise<void> {
  const info = await lstat(dir).catch(() => undefined);
  if (info?.isSymbolicLink()) throw new NoFollowError(`${what} ${dir} is a symbolic link: give the real folder`, dir);
}

/** Writes (or replaces) `file` without following a link at its place or at its folder. */
export async function writeNoFollow(file: string, text: string, mode = 0o644): Promise<void> {
  await refuseLinkedFolder(dirname(file), 'the folder');
  const temporary = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeExclusive(temporary, text, mode);
    await rename(temporary, file);
  } finally {
    await rm(temporary, { force: true });
  }
}
