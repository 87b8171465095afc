/**
 * The CLI's cache of Login keys, one 0600 file per server under $XDG_CONFIG_HOME/teamkeys/logins/
 * (default ~/.config/teamkeys/logins/), in a 0700 folder. Read on every kubectl command by
 * `teamkeys credential`, so this module imports only node's own modules and api/resources.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { apiRoot } from '../api/resources.js';

export interface CachedLogin {
  /** The server's API root, as kubeconfig names it. */
  server: string;
  /** The OwnedAccessKey's name (logout deletes it; the next login replaces it). */
  name: string;
  key: string;
  user: string;
  /** The key's lifetime after its last use, in seconds. */
  ttlSeconds: number;
  /** When the key expires unless used again: RFC 3339. */
  expirationTimestamp: string;
  /** The process `teamkeys credential` last gave the key to (kubectl's pid): a second call from it follows a 401. */
  handedTo?: number;
  /**
   * The server's reason when it refused the key: no longer offered, but kept, so the next
   * `teamkeys login` names it to be replaced (deleted) and the credential can say why.
   */
  refused?: string;
}

/** The folder of the CLI's own files: $XDG_CONFIG_HOME/teamkeys, else ~/.config/teamkeys. */
export function configDir(): string {
  const xdg = process.env.XDG_CONFIG_HOME;
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.config'), 'teamkeys');
}

export { authBase } from '../api/resources.js';

export function cacheFile(server: string): string {
  return join(configDir(), 'logins', `${apiRoot(server).replace(/[^A-Za-z0-9.-]+/g, '_')}.json`);
}

/**
 * The cached Login key of `server`, if the file holds one for that very server in full. Two servers
 * may share a file name (characters outside [A-Za-z0-9.-] are flattened), and a key is never sent
 * to a server it was not minted by: a file naming another server, or missing a field, is no cache
 * (found by a review: one server's key was offered to another, and a file missing a field crashed
 * `teamkeys credential`).
 */
export function readLogin(server: string): CachedLogin | undefined {
  try {
    const parsed = JSON.parse(readFileSync(cacheFile(server), 'utf8')) as Partial<Record<keyof CachedLogin, unknown>>;
    const strings = ['server', 'name', 'key', 'user', 'expirationTimestamp'] as const;
    if (strings.some((f) => typeof parsed[f] !== 'string') || typeof parsed.ttlSeconds !== 'number' || !Number.isFinite(parsed.ttlSeconds)) return undefined;
    if (apiRoot(parsed.server as string) !== apiRoot(server)) return undefined;
    return parsed as CachedLogin;
  } catch {
    return undefined;
  }
}

/** Whether the cached key is still within its lifetime at `now`. */
export const loginValid = (login: CachedLogin | undefined, now = Date.now()): login is CachedLogin =>
  login !== undefined && login.refused === undefined && Date.parse(login.expirationTimestamp) > now;

/** Writes the cache file 0600 (a temporary file renamed over it, so a reader never sees half of one). */
export function writeLogin(login: CachedLogin): void {
  const file = cacheFile(login.server);
  const dir = join(file, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

export function removeLogin(server: string): void {
  rmSync(cacheFile(server), { force: true });
}
