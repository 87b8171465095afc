/**
 * The pull request never carries a key: every file the change touches (from the base commit the
 * event names, `git diff --name-only BASE HEAD`) is scanned for key values in the format, whatever
 * its type, and each finding is an error at its `file:line:col` (never the value). Where the base
 * cannot be compared (no base commit, a shallow checkout without it), every tracked file is scanned:
 * stricter, never weaker.
 */
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleGit } from 'simple-git';
import { findKeys, keyInFileMessage } from '../api/key-scan.js';
import type { ManifestError } from '../gitops/source/manifests.js';

/** Files larger than this are not read (a key in a build artifact is not what a review looks at). */
const maxFileBytes = 5 * 1024 * 1024;

/**
 * The change an event carries: a pull request's or merge group's base commit (untrusted: if it
 * cannot be compared, every tracked file is read), a push's `before` (a new branch's zeros compare
 * nothing: every tracked file). Other events (a schedule) change no file: undefined.
 */
export function changeOf(payload: object, trusted: boolean): { base?: string; fallback: boolean } | undefined {
  const p = payload as { before?: string; pull_request?: { base?: { sha?: string } }; merge_group?: { base_sha?: string } };
  const base = p.pull_request?.base?.sha ?? p.merge_group?.base_sha;
  if (base || !trusted) return { ...(base ? { base } : {}), fallback: true };
  if (typeof p.before === 'string') return /^0+$/.test(p.before) ? { fallback: true } : { base: p.before, fallback: true };
  return undefined;
}

async function changedFiles(workspace: string, base: string | undefined, fallback: boolean): Promise<{ files: string[]; scope: string }> {
  const git = simpleGit(workspace);
  if (base) {
    const diff = await git.raw(['diff', '--name-only', '--diff-filter=ACMR', '-z', base, 'HEAD']).catch(() => undefined);
    if (diff !== undefined) return { files: diff.split('\0').filter(Boolean), scope: `files changed since ${base.slice(0, 12)}` };
  }
  if (!fallback) return { files: [], scope: 'no files' };
  const tracked = await git.raw(['ls-files', '-z']).catch(() => '');
  return { files: tracked.split('\0').filter(Boolean), scope: 'every tracked file (no base commit to compare with)' };
}

/** The keys the change's files hold, as errors naming workspace-relative `file:line:col`; `scope` says which files were read. */
export async function keysInChangedFiles(workspace: string, base: string | undefined, fallback = true): Promise<{ errors: ManifestError[]; scope: string }> {
  const { files, scope } = await changedFiles(workspace, base, fallback);
  const errors: ManifestError[] = [];
  for (const file of files.sort()) {
    const path = join(workspace, file);
    // lstat, and a link is not read: git holds a link as the path it names, and a pull request's
    // link to /outside/deploy.env or /proc/self/environ would have its author told where a key sits
    // in a file outside the checkout (found by a review). A folder on the way is git's own.
    const info = await lstat(path).catch(() => undefined);
    if (!info?.isFile() || info.size > maxFileBytes) continue;
    const text = await readFile(path, 'utf8').catch(() => '');
    for (const k of findKeys(text)) errors.push({ file, line: k.line, column: k.column, message: keyInFileMessage });
  }
  return { errors, scope };
}
