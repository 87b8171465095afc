/**
 * A source's default id, the value of the annotation that marks (and lets prune find) the objects
 * it manages. It must name the source the same way wherever it runs, and differ between sources:
 * the repository's remote URL, normalized, plus the path within it (`github.com/org/teams/manifests`).
 * A CI checkout and a laptop clone share the origin, so they agree; a repository with no origin is
 * named by its location, which is what its clones have as their origin.
 */
import { realpath } from 'node:fs/promises';
import { basename, posix, relative, resolve, sep } from 'node:path';
import { simpleGit } from 'simple-git';
import { normalizeGitUrl, withoutCredentials } from './git-url.js';

function within(paths: (string | undefined)[]): string {
  return posix.normalize(paths.filter((p) => p && p !== '.').join('/') || '.').replace(/^\.\/?|\/+$/g, '');
}

/** `repo` plus `/path` when the manifests are below the root: `github.com/acme/teams/gitops`, read as a link to the folder. */
export function joinId(repo: string, ...paths: (string | undefined)[]): string {
  const path = within(paths);
  return path === '' || path === '.' ? repo : `${repo}/${path}`;
}

/** The id an earlier version gave the same folder, `repo//path`: objects carrying it are adopted, never pruned. */
export function doubleSlashId(repo: string, ...paths: (string | undefined)[]): string {
  const path = within(paths);
  return path === '' || path === '.' ? repo : `${repo}//${path}`;
}

/** How a local repository is known to its clones: its origin, else its own location. */
async function repositoryName(dir: string): Promise<string> {
  const abs = await realpath(resolve(dir)).catch(() => resolve(dir));
  const origin = (await simpleGit(abs).remote(['get-url', 'origin']).catch(() => undefined))?.trim();
  return normalizeGitUrl(origin || abs, abs);
}

/** The work tree a folder is in (its top, real path), and the folder's path within it; undefined outside git. */
export async function workTreeOf(folder: string): Promise<{ repo: string; top: string; within: string } | undefined> {
  const top = (await simpleGit(folder).revparse(['--show-toplevel']).catch(() => ''))?.trim();
  if (!top) return undefined;
  const [realTop, realFolder] = await Promise.all([realpath(top), realpath(folder)]);
  return { repo: await repositoryName(realTop), top: realTop, within: relative(realTop, realFolder).split(sep).join('/') };
}

/** The id of a git source: the remote normalized (a local repository by its origin, else its path) plus `path`. */
export async function gitSourceId(source: string, isUrl: boolean, path: string | undefined): Promise<{ id: string; former: string }> {
  const repo = isUrl ? normalizeGitUrl(source) : await repositoryName(source);
  return { id: joinId(repo, path), former: doubleSlashId(repo, path) };
}

/** The defaults before source ids named the repository: a folder's base name, a git URL as given. */
export function formerDefaultIds(source: string, isGit: boolean, path: string | undefined, root: string): string[] {
  const sub = path ?? '.';
  if (isGit) {
    const url = withoutCredentials(source);
    return [sub === '.' ? url : `${url}//${sub}`];
  }
  return [sub === '.' ? basename(root) : `${basename(root)}/${sub}`];
}
