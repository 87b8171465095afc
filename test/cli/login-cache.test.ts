/**
 * The CLI's Login key cache and kubeconfig, from a review of the sign-in's local storage:
 * - a key is offered only to the server it was minted by: two servers may share a cache file name
 *   (characters outside [A-Za-z0-9.-] are flattened), and a file naming another server is no cache;
 * - a cache file missing a field is no cache (it made `teamkeys credential` throw under kubectl);
 * - `--kubeconfig` into a folder that does not exist yet (~/.kube on a fresh machine) makes it.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runCredential } from '../../src/cli/credential.js';
import { writeExecKubeconfig } from '../../src/cli/kubeconfig-exec.js';
import { cacheFile, readLogin, writeLogin } from '../../src/cli/login-cache.js';

describe("the CLI's Login key cache", () => {
  let home: string;
  const saved = process.env.XDG_CONFIG_HOME;
  const later = () => new Date(Date.now() + 3600_000).toISOString();
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'teamkeys-login-cache-'));
    process.env.XDG_CONFIG_HOME = join(home, 'cfg');
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved;
    vi.restoreAllMocks();
    rmSync(home, { recursive: true, force: true });
  });

  it("never offers one server's key to another whose cache file has the same name", () => {
    const real = 'https://host:8443';
    const other = 'https://host/8443/kubernetes/management';
    expect(cacheFile(other)).toBe(cacheFile(real));
    writeLogin({ server: 'https://host:8443/kubernetes/management', name: 'login-ana-abcde', key: 'KeyOfTheRealServer'.repeat(2), user: 'ana', ttlSeconds: 3600, expirationTimestamp: later() });
    expect(readLogin(real)?.key).toBe('KeyOfTheRealServer'.repeat(2));
    expect(readLogin(other)).toBeUndefined();
  });

  it('a cache file missing a field is no cache: teamkeys credential says how to sign in, on stderr, and prints no credential', async () => {
    const server = 'https://teamkeys.example.com';
    mkdirSync(join(cacheFile(server), '..'), { recursive: true });
    for (const missing of ['ttlSeconds', 'server', 'expirationTimestamp']) {
      const login: Record<string, unknown> = { server: `${server}/kubernetes/management`, name: 'n', key: 'k'.repeat(40), user: 'u', ttlSeconds: 60, expirationTimestamp: later() };
      delete login[missing];
      writeFileSync(cacheFile(server), JSON.stringify(login));
      const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      expect(await runCredential(['--server', server]), missing).toBe(1);
      expect(out).not.toHaveBeenCalled();
      expect(String(err.mock.calls[0]?.[0])).toBe(`teamkeys: no valid sign-in for ${server}: run teamkeys login --server ${server}\n`);
      vi.restoreAllMocks();
    }
  });

  it('a key refused while a sign-in elsewhere cached a new one: the new key is kept and handed out', async () => {
    // A server that holds back its 401 to the old key until the new sign-in is cached.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    const srv = createServer((req, res) => {
      seen.push(String(req.headers.authorization));
      req.resume();
      void held.then(() => res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'Status', code: 401, message: 'Unauthorized' })));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const server = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
      const oldKey = `Old${'o'.repeat(45)}`;
      const newKey = `New${'n'.repeat(45)}`;
      // Handed to this process's parent already: the next call is the one client-go makes after a 401.
      writeLogin({ server: `${server}/kubernetes/management`, name: 'login-old', key: oldKey, user: 'ana', ttlSeconds: 3600, expirationTimestamp: later(), handedTo: process.ppid });
      const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      const running = runCredential(['--server', server]);
      await vi.waitFor(() => expect(seen).toEqual([`Bearer ${oldKey}`]));
      writeLogin({ server: `${server}/kubernetes/management`, name: 'login-new', key: newKey, user: 'ana', ttlSeconds: 3600, expirationTimestamp: later() });
      release();
      expect(await running).toBe(0);
      expect(JSON.parse(String(out.mock.calls[0]?.[0])).status.token).toBe(newKey);
      const cached = readLogin(server);
      expect([cached?.name, cached?.key, cached?.refused]).toEqual(['login-new', newKey, undefined]);
    } finally {
      srv.close();
    }
  });

  it('writes the kubeconfig into a folder that does not exist yet, 0600', async () => {
    const path = join(home, '.kube', 'config');
    await writeExecKubeconfig(path, 'https://teamkeys.example.com', undefined);
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toContain('server: https://teamkeys.example.com/kubernetes/management');
  });
});
