import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { readEvents } from './in-process.js';
import { startServe, type Served } from './serve-process.js';

describe('teamkeys serve as a process', () => {
  let served: Served | undefined;
  afterEach(async () => {
    await served?.stop();
    served = undefined;
  });

  it('serves HTTPS unless told otherwise: --insecure-http and --tls-cert exclude each other', () => {
    const r = teamkeys(['serve', '--listen', '127.0.0.1:0', '--insecure-http', '--tls-cert', 'c.pem', '--tls-key', 'k.pem']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--insecure-http and --tls-cert exclude each other');
  });

  it('refuses a malformed --listen and a lone --tls-cert', () => {
    expect(teamkeys(['serve', '--listen', 'nowhere']).stderr).toContain('--listen must be HOST:PORT');
    const lone = teamkeys(['serve', '--listen', '127.0.0.1:0', '--tls-cert', 'x.pem']);
    expect(lone.code).toBe(1);
    expect(lone.stderr).toContain('--tls-cert and --tls-key go together');
  });

  it('prints its URL, serves, and stops cleanly on SIGTERM even with a watch open', async () => {
    served = await startServe(['--insecure-http']);
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/kubernetes\/management$/);
    const api = `${served.url}/apis/management.service/v1`;
    const watch = await fetch(`${api}/teams?watch=true&fieldSelector=metadata.name%3Dnobody`, { headers: { Authorization: `Bearer ${served.adminKey}` } });
    expect(watch.status).toBe(200);
    const pending = readEvents(watch, 1, 8000);
    const started = Date.now();
    const code = await served.stop('SIGTERM');
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await pending).toEqual([]);
    expect(served.stderr()).toContain('shutting down');
  });

  it('with TEAMKEYS_ADMIN_KEY, says how kubectl passes that key, and that way works', async () => {
    const adminKey = 'k'.repeat(20) + 'Envkey0123456789abcdefghijklmnop';
    served = await startServe([], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    const line = served.stdout().split('\n').find((l) => l.includes('holds no key'));
    expect(line).toContain(`kubectl --kubeconfig ${served.kubeconfig} --token "$TEAMKEYS_ADMIN_KEY" get teams`);
    expect(served.stdout()).not.toContain('kubectl can use');
    const r = spawnSync('kubectl', ['--kubeconfig', served.kubeconfig, '--token', adminKey, 'get', 'teams', '-o', 'name'], { encoding: 'utf8', timeout: 20_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('team.management.service/admins');
    expect(served.stdout() + served.stderr()).not.toContain(adminKey);
  });

  it('keeps objects across a restart on the SQLite store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-restart-'));
    try {
      const store = ['--store', `sqlite:${join(dir, 'db')}`, '--insecure-http'];
      const first = await startServe(store);
      const created = await fetch(`${first.url}/apis/management.service/v1/teams`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${first.adminKey}` },
        body: JSON.stringify({ metadata: { name: 'durable' }, spec: { users: ['ana'] } }),
      });
      const { metadata } = (await created.json()) as { metadata: { uid: string; resourceVersion: string } };
      expect(await first.stop()).toBe(0);
      // The second start finds the store populated, so it bootstraps nothing: reuse the first key.
      served = await startServe(store, { env: { TEAMKEYS_ADMIN_KEY: first.adminKey } });
      const again = (await (await fetch(`${served.url}/apis/management.service/v1/teams/durable`, { headers: { Authorization: `Bearer ${first.adminKey}` } })).json()) as { metadata: { uid: string; resourceVersion: string } };
      expect(again.metadata).toMatchObject({ uid: metadata.uid, resourceVersion: metadata.resourceVersion });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
