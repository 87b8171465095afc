/**
 * Issue 40, point 6: docs/postgres.md followed literally. PostgreSQL is started where the page
 * assumes one (startPostgres, as the superuser postgres); then the page's own commands run in
 * order in one folder: the role and the database, replica A, replica B with what it takes from A.
 * Only the places are swapped: db.internal:5432 for the throwaway server, the listen ports for
 * free ones, `teamkeys` for the built CLI.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, root } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

/** The page's first sh block, as commands (continuation lines joined, comments dropped). */
function pageCommands(): string[] {
  const page = readFileSync(join(root, 'docs/postgres.md'), 'utf8');
  const block = page.match(/```sh\n([\s\S]*?)```/)![1]!;
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** PostgreSQL's client tools (createuser, createdb) where the server's binaries are. */
function pgBinDir(): string {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort().reverse() : [];
  const dir = versions.map((v) => `/usr/lib/postgresql/${v}/bin`).find((d) => existsSync(`${d}/createdb`));
  if (!dir) throw new Error("PostgreSQL's createdb was not found: install PostgreSQL (apt-get install postgresql)");
  return dir;
}

describe('docs/postgres.md, followed literally', () => {
  let pg: PostgresServer;
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-postgres-docs-'));
  const running: { child: ChildProcess; out: () => string }[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const r of running) {
      if (r.child.exitCode === null) {
        const exited = new Promise((done) => r.child.once('exit', done));
        r.child.kill('SIGTERM');
        await exited;
      }
    }
    pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('two replicas from the commands on the page: what A writes B serves, with A\'s certificate and administrator key', async () => {
    const commands = pageCommands();
    expect(commands.map((c) => c.split(' ')[0])).toEqual(['createuser', 'createdb', 'teamkeys', 'teamkeys']);
    const dbPort = new URL(pg.url).port;
    const ports = [await freePort(), await freePort()];
    const env = { ...process.env, PATH: `${pgBinDir()}:${process.env.PATH}`, PGHOST: '127.0.0.1', PGPORT: dbPort, PGUSER: 'postgres', TEAMKEYS_ADMIN_KEY: '', TEAMKEYS_STORE: '' };
    const urls: string[] = [];
    for (const command of commands) {
      const line = command
        .replace(/db\.internal:5432/g, `127.0.0.1:${dbPort}`)
        .replace(/^teamkeys /, `${process.execPath} ${bin} `)
        .replace(/0\.0\.0\.0:808([01])/, (_, i: string) => `127.0.0.1:${ports[Number(i)]}`);
      if (!command.startsWith('teamkeys ')) {
        const r = spawnSync('bash', ['-e', '-c', line], { cwd: dir, env, encoding: 'utf8' });
        expect(r.status, `${command}\n${r.stderr}`).toBe(0);
        continue;
      }
      // A replica runs until stopped: started, then awaited until it says where it serves.
      const child = spawn('bash', ['-c', `exec ${line}`], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      running.push({ child, out: () => out });
      urls.push(
        await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`${command}: no "serving on" within 30 s:\n${out}`)), 30_000);
          child.stdout!.on('data', () => {
            const m = out.match(/^teamkeys serving on (\S+)$/m);
            if (m) {
              clearTimeout(timer);
              resolve(m[1]!);
            }
          });
          child.once('exit', (code) => reject(new Error(`${command} exited with ${code}:\n${out}`)));
        }),
      );
    }
    // A made what the page says it makes.
    for (const f of ['state-a/admin.key', 'state-a/encryption.yaml', 'state-a/tls/cert.pem', 'state-a/kubeconfig']) expect(existsSync(join(dir, f)), f).toBe(true);
    const adminKey = readFileSync(join(dir, 'state-a/admin.key'), 'utf8').trim();
    const dispatcher = new Agent({ connect: { ca: readFileSync(join(dir, 'state-a/tls/cert.pem')) } });
    const call = (base: string, path: string, init: RequestInit = {}) =>
      fetch(`${base}/apis/management.service/v1${path}`, { ...init, headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' }, dispatcher } as RequestInit);
    const [a, b] = urls as [string, string];
    expect((await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: 'through-a' } }) })).status).toBe(201);
    const read = await call(b, '/teams/through-a');
    expect(read.status).toBe(200);
    expect(((await read.json()) as { metadata: { name: string } }).metadata.name).toBe('through-a');
    // The role the page made owns what teamkeys created.
    const [owner] = await pg.query<{ owner: string }>("SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'teamkeys'");
    expect(owner?.owner).toBe('teamkeys');
    await dispatcher.close();
  }, 120_000);
});
