/**
 * `teamkeys credential` and a key the server stopped accepting (deleted, revoked, refused at
 * refresh): kubectl gets a 401 for it and runs the plugin again, and the plugin used to hand out
 * the same key again, on every command, until its local expiry. Now a second call from the same
 * kubectl asks the server; a refused key leaves the cache, with the server's reason on stderr, and
 * the next command says how to sign in. Real kubectl, real `teamkeys serve` over TLS.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoot } from '../../src/api/resources.js';
import { bin } from '../support/cli.js';
import { kubectl, startServe, type Served } from '../support/serve-process.js';

describe('teamkeys credential, after the server refused its key', () => {
  let served: Served;
  let home: string;
  let kubeconfig: string;
  let ca: string;
  const anaKey = `Ana${'a'.repeat(45)}`;
  const cfg = () => join(home, 'cfg');
  const cacheFile = () => join(cfg(), 'teamkeys', 'logins', `${apiRoot(served.url).replace(/[^A-Za-z0-9.-]+/g, '_')}.json`);
  const run = (args: string[]) => kubectl(served, args, { kubeconfig, env: { XDG_CONFIG_HOME: cfg() } });

  beforeAll(async () => {
    served = await startServe();
    home = mkdtempSync(join(tmpdir(), 'teamkeys-credential-'));
    ca = join(served.dir, 'tls', 'cert.pem');
    const made = kubectl(served, ['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'ana-key' }, spec: { user: 'ana', key: anaKey } }) });
    expect(made.code, made.stderr).toBe(0);
    kubeconfig = join(home, 'kubeconfig');
    const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [bin, 'credential', '--server', apiRoot(served.url), '--ca-file', ca], interactiveMode: 'IfAvailable', provideClusterInfo: false };
    writeFileSync(kubeconfig, stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: { server: apiRoot(served.url), 'certificate-authority-data': readFileSync(ca).toString('base64') } }], users: [{ name: 'u', user: { exec } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }));
    const later = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const cache = cacheFile();
    mkdirSync(join(cache, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(cache, JSON.stringify({ server: apiRoot(served.url), name: 'ana-key', key: anaKey, user: 'ana', ttlSeconds: 3600, expirationTimestamp: later }), { mode: 0o600 });
  }, 30_000);
  afterAll(async () => {
    await served?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('a key the server accepts is handed out once per command, and the server is not asked', () => {
    for (let i = 0; i < 2; i++) {
      const who = run(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
      expect([who.code, who.stdout, who.stderr]).toEqual([0, 'ana', '']);
    }
    const cached = JSON.parse(readFileSync(cacheFile(), 'utf8')) as { key: string; handedTo?: number };
    expect(cached.key).toBe(anaKey);
    expect(typeof cached.handedTo).toBe('number');
  });

  it("a key the server refuses leaves the cache with the server's reason, and the next command says how to sign in", () => {
    const deleted = kubectl(served, ['delete', 'ownedaccesskey', 'ana-key']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const refused = run(['auth', 'whoami']);
    expect(refused.code).not.toBe(0);
    const told = `teamkeys: the server refused the key of your sign-in (ana-key): Unauthorized; run teamkeys login --server ${apiRoot(served.url)} --ca-file ${ca}`;
    expect(refused.stderr).toContain(told);
    expect(refused.stderr).not.toContain(anaKey);
    // Kept, marked: the next teamkeys login names it to be replaced.
    expect(JSON.parse(readFileSync(cacheFile(), 'utf8'))).toMatchObject({ name: 'ana-key', refused: 'Unauthorized' });
    const next = run(['auth', 'whoami']);
    expect(next.code).not.toBe(0);
    expect(next.stderr).toContain(told);
  });
});
