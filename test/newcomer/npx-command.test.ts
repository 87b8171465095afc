/**
 * Issue 40, point 4: the README's way to run teamkeys is `npx teamkeys ...` in the clone, after
 * `npm ci` (which built dist/). Through that very command: npx runs the build npm ci made instead of
 * building it again in its cache (npm runs the clone's prepare there), and a SIGTERM sent to npx, as a
 * process manager sends it, stops the server npx started instead of leaving it running, re-parented.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from '../support/cli.js';

const children = (pid: number) => (spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.match(/\d+/g) ?? []).map(Number);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("the README's npx command", () => {
  const work = mkdtempSync(join(tmpdir(), 'teamkeys-npx-'));
  // npx's own cache, fresh: as on a clone's first npx, npm installs the clone there and runs its prepare.
  const env = { ...process.env, npm_config_cache: join(work, 'npm-cache'), npm_config_update_notifier: 'false', TEAMKEYS_ADMIN_KEY: '', TEAMKEYS_STORE: '' };
  const left: number[] = [];
  afterAll(() => {
    for (const pid of left) if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  it('runs the build npm ci made, and SIGTERM to npx stops the server it started, cleanly', async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const first = readme.match(/```sh\n# 1\.[^\n]*\n([^\n]+)\n/)![1]!;
    expect(first).toBe('npm ci && npx teamkeys serve --sync-source examples/gitops');
    // npm ci is done (this checkout's node_modules and dist/); its own state directory and a free port.
    const command = `${first.replace(/^npm ci && /, '')} --state-dir ${join(work, 'state')} --listen 127.0.0.1:0`;
    const main = join(root, 'dist/cli/main.js');
    const built = statSync(main).mtimeMs;
    const npx = spawn('bash', ['-c', `exec ${command}`], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    left.push(npx.pid!);
    let out = '';
    let err = '';
    npx.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    npx.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const until = Date.now() + 120_000;
    while (!/^teamkeys serving on /m.test(out)) {
      if (npx.exitCode !== null) throw new Error(`npx exited with ${npx.exitCode}:\n${out}\n${err}`);
      if (Date.now() > until) throw new Error(`npx teamkeys serve did not serve within 120 s:\n${out}\n${err}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // No second build: dist/ is the one npm ci made (npm ran the clone's prepare in npx's cache).
    expect(statSync(main).mtimeMs, 'dist/ was built again').toBe(built);
    expect(err).not.toMatch(/> teamkeys@\S+ build|tsc -p/);

    // npx (npm exec) -> sh -c -> the server.
    const servers = children(npx.pid!).flatMap(children);
    expect(servers, 'the server runs under npx').toHaveLength(1);
    left.push(servers[0]!);
    const exited = new Promise<number | null>((r) => npx.once('exit', r));
    npx.kill('SIGTERM');
    await exited;
    const stopBy = Date.now() + 30_000;
    while (alive(servers[0]!)) {
      if (Date.now() > stopBy) throw new Error(`the server (pid ${servers[0]}) still runs 30 s after SIGTERM to npx:\n${err}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 180_000);
});
