/**
 * Git remote addresses: which --source values name a repository rather than a folder (one test,
 * shared by the source loader and the daemon's file watcher), and the normalized form that makes
 * a source's default id: `git@github.com:org/repo.git`, `https://user:token@github.com/org/repo`
 * and `ssh://git@github.com:22/org/repo` all become `github.com/org/repo`.
 */
import { isAbsolute, resolve } from 'node:path';

const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * scp-like syntax, as git reads it: `[user[:password]@]host:path`, a colon before any slash. The
 * user part ends at the last `@` that a `host:` follows, so a password holding `@` or `:`
 * (`ci@acme.com:TOKEN@host:repo`) is never taken for the host or the path.
 */
function parseScp(address: string): { user: string; host: string; path: string } | undefined {
  if (withScheme.test(address)) return undefined;
  for (let at = address.lastIndexOf('@'); at > 0; at = address.lastIndexOf('@', at - 1)) {
    const rest = address.slice(at + 1);
    const colon = rest.indexOf(':');
    const host = rest.slice(0, colon);
    if (colon > 0 && !host.includes('/') && !address.slice(0, at).includes('/')) return { user: address.slice(0, at), host, path: rest.slice(colon + 1) };
  }
  return undefined;
}

/** Whether a --source value is a git remote (a URL, `user@host:path`, or a path ending in .git) rather than a folder. */
export function isGitUrl(source: string): boolean {
  return withScheme.test(source) || parseScp(source) !== undefined || /\.git\/?$/.test(source);
}

/**
 * A URL (with a scheme) without user name and password. The WHATWG parser says whether it holds
 * any; they are cut where that parser ends them (the last `@` before the first `/`, `?`, `#` or
 * `\\` after `//`), so the rest reads as given. One the parser rejects loses all up to its last `@`.
 */
function urlWithoutCredentials(address: string): string {
  const scheme = address.indexOf('://') + 3;
  let url: URL | undefined;
  try {
    url = new URL(address);
  } catch {
    url = undefined;
  }
  const cut = (at: number) => (at >= scheme ? `${address.slice(0, scheme)}${address.slice(at + 1)}` : address);
  if (!url) return cut(address.lastIndexOf('@'));
  if (url.username === '' && url.password === '') return address;
  const special = ['http:', 'https:', 'ws:', 'wss:', 'ftp:', 'file:'].includes(url.protocol);
  const ends = ['/', '?', '#', ...(special ? ['\\'] : [])].map((c) => address.indexOf(c, scheme)).filter((i) => i >= 0);
  const authorityEnd = ends.length > 0 ? Math.min(...ends) : address.length;
  const stripped = cut(address.lastIndexOf('@', authorityEnd - 1));
  // Should the parser and this cut ever disagree, the whole of what could be credentials goes.
  return hasCredentials(stripped) ? cut(address.lastIndexOf('@')) : stripped;
}

function hasCredentials(address: string): boolean {
  try {
    const url = new URL(address);
    return url.username !== '' || url.password !== '';
  } catch {
    return address.includes('@');
  }
}

/** The address without user name or password (a URL, or scp-like `user:password@host:path`), for reports and annotations. */
export function withoutCredentials(address: string): string {
  if (withScheme.test(address)) return urlWithoutCredentials(address);
  const scp = parseScp(address);
  // An ssh login name alone (`git@`) is no secret; `user:password@` is.
  return scp ? `${scp.user.includes(':') ? '' : `${scp.user}@`}${scp.host}:${scp.path}` : address;
}

/** Characters that may wrap an address in a message (`'https://...'`, `<...>`, `(...)`). */
const wrapping = '\'"`<>()[]{},;';

/** One word of a message with any credential in an address removed (a URL anywhere in it, or an scp-like address). */
function wordWithoutCredentials(word: string): string {
  if (!word.includes('@')) return word;
  const scheme = word.search(/[a-z][a-z0-9+.-]*:\/\//i);
  if (scheme >= 0) return word.slice(0, scheme) + urlWithoutCredentials(word.slice(scheme));
  let start = 0;
  while (start < word.length && wrapping.includes(word[start]!)) start++;
  const scp = parseScp(word.slice(start));
  return scp ? `${word.slice(0, start)}${withoutCredentials(word.slice(start))}` : word;
}

/** Any text (git's own error messages) with the credentials of every address in it removed. */
export function redactCredentials(text: string): string {
  return text
    .split(/(\s+)/)
    .map((part) => (/^\s+$/.test(part) ? part : wordWithoutCredentials(part)))
    .join('');
}

const trimRepoPath = (path: string) => path.replace(/\/+$/, '').replace(/\/\.git$/, '').replace(/\.git$/, '').replace(/\/+$/, '');

/**
 * The repository a remote address names, in one spelling: host (lower case, no user, no ssh or
 * default port) and path without `.git`; a local path or file:// URL as an absolute path.
 * `base` resolves a relative local path (a remote configured as `../teams`).
 */
export function normalizeGitUrl(address: string, base = process.cwd()): string {
  const scp = parseScp(address);
  if (scp) return `${scp.host.toLowerCase()}/${trimRepoPath(scp.path.replace(/^\/+/, ''))}`;
  if (withScheme.test(address)) {
    const url = new URL(address);
    if (url.protocol === 'file:') return trimRepoPath(decodeURIComponent(url.pathname)) || '/';
    const defaultPort = url.protocol === 'ssh:' || url.protocol === 'git:' || url.port === '' || (url.protocol === 'https:' && url.port === '443') || (url.protocol === 'http:' && url.port === '80');
    const host = `${url.hostname.toLowerCase()}${defaultPort ? '' : `:${url.port}`}`;
    return `${host}/${trimRepoPath(decodeURIComponent(url.pathname).replace(/^\/+/, ''))}`;
  }
  return trimRepoPath(isAbsolute(address) ? resolve(address) : resolve(base, address)) || '/';
}
