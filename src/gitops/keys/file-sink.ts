/**
 * The `file:PATH` sink: a key's value written to a file, mode 0600, atomically (a fresh exclusive
 * file renamed over the old one: a reader sees the old value or the new, never half of one, and a
 * link planted in the file's place is replaced, not followed). Relative paths are taken from the
 * key folder (--key-dir), never from the working directory, which in CI is the checkout. A path
 * inside the source repository is refused: a key written there is one commit away from git.
 */
import { mkdir, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { writeNoFollow } from '../no-follow.js';
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

/** The file a sink writes to, or a KeyDeliveryError saying why it may not. */
export async function sinkFile(sink: FileSink, opts: FileSinkOptions): Promise<string> {
  const fail = (why: string) => new KeyDeliveryError(`the key was not delivered to ${describeTarget(sink)}: ${why}`);
  if (!isAbsolute(sink.path) && !opts.base) throw fail('a relative file: path is taken from the key folder, and no --key-dir was given (give an absolute path or --key-dir)');
  const file = resolve(opts.base ?? '/', sink.path);
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
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
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
