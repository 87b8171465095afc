/**
 * Git remote addresses: which --source values name a repository rather than a folder (one test,
 * shared by the source loader and the daemon's file watcher), and the normalized form that makes
 * a source's default id: `git@github.com:org/repo.git`, `https://user:token@github.com/org/repo`
 * and `ssh://git@github.com:22/org/repo` all become `github.com/org/repo`.
 */
import { isAbsolute, resolve } from 'node:path';

const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i;
/** scp-like syntax, as git reads it: `user@host:path` (a colon before any slash). */
const scpLike = /^([^@/:]+)@([^/:]+):(.*)$/;

/** Whether a --source value is a git remote (a URL, `user@host:path`, or a path ending in .git) rather than a folder. */
export function isGitUrl(source: string): boolean {
  return withScheme.test(source) || scpLike.test(source) || /\.git\/?$/.test(source);
}

/** The URL without user name or password, for reports and annotations. */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]+@/i, '$1');
}

const trimRepoPath = (path: string) => path.replace(/\/+$/, '').replace(/\/\.git$/, '').replace(/\.git$/, '').replace(/\/+$/, '');

/**
 * The repository a remote address names, in one spelling: host (lower case, no user, no ssh or
 * default port) and path without `.git`; a local path or file:// URL as an absolute path.
 * `base` resolves a relative local path (a remote configured as `../teams`).
 */
export function normalizeGitUrl(address: string, base = process.cwd()): string {
  const scp = address.match(scpLike);
  if (scp) return `${scp[2]!.toLowerCase()}/${trimRepoPath(scp[3]!.replace(/^\/+/, ''))}`;
  if (withScheme.test(address)) {
    const url = new URL(address);
    if (url.protocol === 'file:') return trimRepoPath(decodeURIComponent(url.pathname)) || '/';
    const defaultPort = url.protocol === 'ssh:' || url.protocol === 'git:' || url.port === '' || (url.protocol === 'https:' && url.port === '443') || (url.protocol === 'http:' && url.port === '80');
    const host = `${url.hostname.toLowerCase()}${defaultPort ? '' : `:${url.port}`}`;
    return `${host}/${trimRepoPath(decodeURIComponent(url.pathname).replace(/^\/+/, ''))}`;
  }
  return trimRepoPath(isAbsolute(address) ? resolve(address) : resolve(base, address)) || '/';
}
