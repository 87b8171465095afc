/**
 * Issue 28, point 5: --state-dir moves everything `teamkeys serve` keeps, the SQLite store
 * included; two servers started from one folder with different state directories have separate
 * databases; a server pointed at another's SQLite file with other encryption keys is refused;
 * and the administrator-key message never names TEAMKEYS_ADMIN_KEY when it was not set.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bin } from '../support/cli.js';

interface Running {
  child: ChildProcess;
  url: string;
  stdout: string;
  stop(): Promise<number | null>;
}

const cwd = mkdtempSync(join(tmpdir(), 'teamkeys-state-dir-'));
const running: Running[] = [];
afterAll(async () => {
  for (const r of running) await r.stop();
  rmSync(cwd, { recursive: true, force: true });
});

/** `teamkeys serve` from `cwd`, as a user starts it there: no --store unless given; plain HTTP unless `tls`. */
function serve(args: string[], tls = false): Promise<Running | { code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, 'serve', '--listen', '127.0.0.1:0', ...(tls ? [] : ['--insecure-http']), ...args], { cwd, env: { ...process.env, TEAMKEYS_ADMIN_KEY: '', TEAMKEYS_STORE: '', TEAMKEYS_ENCRYPTION_KEY_FILE: '' } });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = stdout.match(/^teamkeys serving on (\S+)$/m);
      if (!m) return;
      const r: Running = {
        child,
        url: m[1]!,
        get stdout() {
          return stdout;
        },
        stop: () => new Promise((done) => (child.exitCode !== null ? done(child.exitCode) : (child.once('exit', done), child.kill('SIGTERM')))),
      };
      running.push(r);
      resolve(r);
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const teams = async (r: Running, key: string) =>
  ((await (await fetch(`${r.url}/apis/management.service/v1/teams`, { headers: { Authorization: `Bearer ${key}` } })).json()) as { items: { metadata: { name: string } }[] }).items.map((t) => t.metadata.name);

describe('--state-dir moves the store', () => {
  it('two servers from one folder with different state directories have separate databases, and nothing lands in ./.teamkeys', async () => {
    const [a, b] = (await Promise.all([serve(['--state-dir', 'a']), serve(['--state-dir', 'b'])])) as [Running, Running];
    expect(a.url && b.url).toBeTruthy();
    for (const d of ['a', 'b']) for (const f of ['teamkeys.db', 'encryption.yaml', 'admin.key']) expect(existsSync(join(cwd, d, f)), `${d}/${f}`).toBe(true);
    expect(existsSync(join(cwd, '.teamkeys'))).toBe(false);
    const keyA = readFileSync(join(cwd, 'a/admin.key'), 'utf8').trim();
    const keyB = readFileSync(join(cwd, 'b/admin.key'), 'utf8').trim();
    const made = await fetch(`${a.url}/apis/management.service/v1/teams`, { method: 'POST', headers: { Authorization: `Bearer ${keyA}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'only-in-a' }, spec: {} }) });
    expect(made.status).toBe(201);
    expect(await teams(a, keyA)).toContain('only-in-a');
    expect(await teams(b, keyB)).not.toContain('only-in-a');
    await b.stop();
  }, 60_000);

  it("a server given another's SQLite file with other encryption keys is refused, naming the key and the fix", async () => {
    const r = (await serve(['--state-dir', 'c', '--store', 'sqlite:a/teamkeys.db'])) as { code: number | null; stdout: string; stderr: string };
    expect(r.code).toBe(1);
    // stderr carries JSON logs here, so the error that ends serve is their fatal line (docs/daemon.md).
    const fatal = r.stderr.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => l.level === 60);
    expect(fatal?.msg).toMatch(/^.*a\/teamkeys\.db is sealed with encryption key "key-\d{8}" \(fingerprint [0-9a-f]{12}\), which .*c\/encryption\.yaml does not hold: another server uses this store with other keys .* Give --encryption-key-file the key file of the servers sharing this store, or --store another file$/);
  }, 30_000);

  it('with the same key file it shares the store, and says no administrator key was made there without naming TEAMKEYS_ADMIN_KEY', async () => {
    // With its self-signed certificate, so it writes a kubeconfig and says what key it holds.
    const d = (await serve(['--state-dir', 'd', '--store', 'sqlite:a/teamkeys.db', '--encryption-key-file', 'a/encryption.yaml'], true)) as Running;
    expect(d.url).toMatch(/^https:/);
    expect(d.stdout).toContain(`holds no key (the store already had its users, so no administrator key was made in ${join(cwd, 'd')})`);
    expect(d.stdout).not.toContain('TEAMKEYS_ADMIN_KEY');
    expect(existsSync(join(cwd, 'd/admin.key'))).toBe(false);
  }, 30_000);
});
