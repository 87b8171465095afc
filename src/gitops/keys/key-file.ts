/**
 * Key files (`--key-dir`): one `<name>.key` per generated key, mode 0600, written so that nothing
 * planted in the folder can redirect a key. The folder may be in a checkout a pull request
 * controls, so a `ci.key -> /dev/stdout` link (or a link to any file) must not receive it: files
 * are opened with O_CREAT | O_EXCL | O_NOFOLLOW, a link in the key's place is refused, and an
 * existing key (a rotation) is replaced by renaming a fresh exclusive file over it, which never
 * follows a link either.
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { dns1123SubdomainErrors } from '../../api/names.js';
import { mkdirNoFollow, NoFollowError, refuseLinkedFolder, writeExclusive, writeNoFollow } from '../no-follow.js';

/** A key file that cannot be written safely: the message names the file, never the key. */
export class KeyFileError extends Error {}

const keyDirCheck = { fix: 'give --key-dir the real folder' };
const asKeyFileError = (err: unknown): never => {
  throw err instanceof NoFollowError ? new KeyFileError(err.message) : err;
};

/** Why `name` cannot name a key file (it would leave the folder, or is no object name), else undefined. */
export function keyNameError(name: string): string | undefined {
  return dns1123SubdomainErrors(name).length > 0 ? `${JSON.stringify(name)} is not a valid object name (DNS-1123 subdomain), so it cannot name a key file` : undefined;
}

/** What is at a path without following a link: 'absent', 'file', or why it cannot hold a key. */
async function entryAt(path: string): Promise<'absent' | 'file' | 'link' | 'other'> {
  const info = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!info) return 'absent';
  return info.isSymbolicLink() ? 'link' : info.isFile() ? 'file' : 'other';
}

/**
 * Checks, before a key is made, that it can be written to `dir/<name>.key`: a valid name, the
 * folder not a link, nothing but a regular file (or nothing) in the key's place. Throws KeyFileError.
 */
export async function checkKeyFile(dir: string, name: string): Promise<string> {
  const bad = keyNameError(name);
  if (bad) throw new KeyFileError(bad);
  await refuseLinkedFolder(dir, 'the key folder', keyDirCheck).catch(asKeyFileError);
  const folder = await entryAt(dir);
  if (folder !== 'absent' && !(await lstat(dir)).isDirectory()) throw new KeyFileError(`the key folder ${dir} is not a folder`);
  const file = join(dir, `${name}.key`);
  const there = await entryAt(file);
  if (there === 'link') throw new KeyFileError(`${file} is a symbolic link: refusing to write a key through it (remove the link)`);
  if (there === 'other') throw new KeyFileError(`${file} is not a regular file: refusing to write a key there`);
  return file;
}

/** Writes a key to `dir/<name>.key` (0600) and returns the file's path; a rotation replaces the old file by rename. */
export async function writeKeyFile(dir: string, name: string, key: string): Promise<string> {
  // Checked before mkdir: a folder that is a link to nowhere must be refused, not created through.
  const file = await checkKeyFile(dir, name);
  await mkdirNoFollow(dir, 'the key folder', 0o700, keyDirCheck).catch(asKeyFileError);
  try {
    await writeExclusive(file, `${key}\n`, 0o600);
    return file;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // Something is there already: a key to rotate, or a link planted since the check (refused here).
  if ((await entryAt(file)) !== 'file') throw new KeyFileError(`${file} is a symbolic link or not a regular file: refusing to write a key through it`);
  await writeNoFollow(file, `${key}\n`, 0o600);
  return file;
}
