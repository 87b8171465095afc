/**
 * The `file:PATH` sink: a key's value written to a file, mode 0600, atomically (a fresh exclusive
 * file renamed over the old one: a reader sees the old value or the new, never half of one, and a
 * link planted in the file's place is replaced, not followed). Paths are relative to the key
 * folder (--key-dir), never to the working directory (in CI the checkout), and stay inside it: a
 * manifest author must not be able to replace the reconciler's own files (its store, its keys).
 * A path inside the source repository is refused: a key written there is one commit away from git.
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { mkdirNoFollow, writeNoFollow } from '../no-follow.js';
import { workTreeOf } from '../source/identity.js';
import { isGitSource, type SourceOptions } from '../source/load.js';
import { KeyDeliveryError } from './github-secrets.js';
import { describeTarget, type FileSink } from './sinks.js';

export interface FileSinkOptions {
  /** Where relative paths start (--key-dir); unset: relative paths are refused. */
  base?: string;
  /** Folders no key may be written into: the source's folder and its git work tree. */
  refuse?: string[];
}

const inside = (folder: string, path: string) => {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/** The real path of a folder, or of the nearest folder above it that exists (links resolved). */
async function realFolder(path: string): Promise<string> {
  const missing: string[] = [];
  for (let p = path; ; p = dirname(p)) {
    try {
      return join(await realpath(p), ...missing.reverse());
    } catch {
      if (dirname(p) === p) return path;
      missing.push(basename(p));
    }
  }
}

/**
 * The file a sink writes to, or a KeyDeliveryError saying why it may not. The path is relative and
 * holds no `..` (parseSecretTarget refuses both; checked again here for a saved plan), and every
 * folder on the way that exists has its real path inside the real key folder: a link planted as
 * any folder above the file cannot carry the key (or the file it replaces) out of --key-dir.
 */
export async function sinkFile(sink: FileSink, opts: FileSinkOptions): Promise<string> {
  const fail = (why: string) => new KeyDeliveryError(`the key was not delivered to ${describeTarget(sink)}: ${why}`);
  if (isAbsolute(sink.path) || sink.path.split(/[\\/]/).includes('..')) throw fail('a file: path is relative to the key folder (--key-dir), without ".."');
  if (!opts.base) throw fail('a relative file: path is taken from the key folder, and no --key-dir was given (give --key-dir)');
  const base = resolve(opts.base);
  const file = resolve(base, sink.path);
  if (!inside(base, file) || file === base) throw fail(`${file} is not inside the key folder ${base}`);
  const realBase = await realFolder(base);
  for (let folder = dirname(file); inside(base, folder); folder = dirname(folder)) {
    const real = await realpath(folder).catch(() => undefined);
    if (real !== undefined && !inside(realBase, real)) throw fail(`${folder} leads to ${real}, outside the key folder ${base}`);
    if (folder === base) break;
  }
  const folder = await realFolder(dirname(file));
  for (const root of opts.refuse ?? []) {
    const realRoot = await realFolder(resolve(root));
    if (inside(realRoot, folder) || inside(resolve(root), dirname(file))) throw fail(`${file} is inside the source repository (${root}): a key is never written where git could take it`);
  }
  return file;
}

/** Writes the key to the sink's file (0600); the key is in no message. */
export async function writeSink(sink: FileSink, key: string, opts: FileSinkOptions): Promise<void> {
  const file = await sinkFile(sink, opts);
  try {
    // Every folder from the key folder down is link-free (the key folder itself from the working directory).
    await mkdirNoFollow(resolve(opts.base!), 'the key folder', 0o700);
    await mkdirNoFollow(dirname(file), 'the key folder', 0o700, { anchor: resolve(opts.base!) });
    await writeNoFollow(file, `${key}\n`, 0o600);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ELOOP' ? e.message : `${e.code ?? 'error'} ${e.syscall ?? ''} ${e.path ?? ''}`.replace(/\s+/g, ' ').trim();
    throw new KeyDeliveryError(`the key was not delivered to ${describeTarget(sink)}: ${why}`);
  }
}

/** The folders a source is read from (its folder and git work tree, or its mirror): no sink may write there. */
export async function sourceFolders(source: SourceOptions): Promise<string[]> {
  if (isGitSource(source)) return source.mirrorDir ? [source.mirrorDir] : [];
  const folder = resolve(source.source);
  const tree = await workTreeOf(folder).catch(() => undefined);
  return tree ? [folder, tree.top] : [folder];
}
