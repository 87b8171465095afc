/**
 * Follows the README on a fresh clone: its first command (npm ci, then the server with the example
 * GitOps repository), then the kubectl walkthrough it shows. Slow (npm ci installs every package).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from '../support/cli.js';
import { kubectlPath } from '../server/serve-process.js';
import { compiledSqlite, localPrebuild } from '../support/prebuilt.js';

function shellBlocks(markdown: string): string[][] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    m[1]!
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter((l) => l && !l.startsWith('#')),
  );
}

describe('the README\'s "Keep it in Git" commands', () => {
  it('validate, as written, passes on the shipped examples and policies', () => {
    const block = shellBlocks(readFileSync(join(root, 'README.md'), 'utf8')).find((b) => b.some((l) => l.includes('teamkeys validate')))!;
    const line = block.find((l) => l.includes('teamkeys validate'))!;
    expect(line).toBe('npx teamkeys validate --source examples/gitops --policy examples/policies');
    const r = spawnSync('bash', ['-c', line], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^The manifests are valid: checked 5 objects \(2 OwnedAccessKeys, 3 Teams\)/);
  }, 150_000);
});

describe('the README, followed on a fresh clone', () => {
  const clone = mkdtempSync(join(tmpdir(), 'teamkeys-newcomer-'));
  const scratch = mkdtempSync(join(tmpdir(), 'teamkeys-newcomer-prebuilt-'));
  let server: ReturnType<typeof spawn> | undefined;
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
    if (server?.pid) {
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    rmSync(clone, { recursive: true, force: true });
  });

  it('installs, serves, syncs the example repository and answers kubectl as the README says', async () => {
    kubectlPath();
    const [first, second] = shellBlocks(readFileSync(join(root, 'README.md'), 'utf8'));
    const [main, tests] = first!;
    expect(main).toBe('npm ci && npx teamkeys serve --sync-source examples/gitops');
    expect(tests).toBe('npm ci && npm test');
    expect(spawnSync('git', ['clone', '--quiet', root, clone]).status).toBe(0);

    // npm's settings, as environment, leave the command as written: better-sqlite3 prebuilt (see
    // support/prebuilt.ts), packages from npm's cache, no audit or funding request to the registry.
    const npm = { ...localPrebuild(scratch).env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
    server = spawn('bash', ['-c', main!], { cwd: clone, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: '', ...npm } });
    let out = '';
    let err = '';
    server.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    server.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const deadline = Date.now() + 280_000;
    while (!out.includes('Created 5, ')) {
      if (server.exitCode !== null) throw new Error(`the first command exited with ${server.exitCode}:\n${out}\n${err.slice(-3000)}`);
      if (Date.now() > deadline) throw new Error(`no first sync report in time:\n${out}\n${err.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(out).toContain('teamkeys serving on https://127.0.0.1:8080/kubernetes/management');
    expect(out).toContain('teamkeys: first sync from examples/gitops');
    expect(existsSync(join(clone, '.teamkeys/keys/payments-ci.key'))).toBe(true);
    expect(compiledSqlite(clone), 'npm ci compiled better-sqlite3 rather than taking the prebuilt binary').toBe(false);

    // The walkthrough, line by line, in one shell as a person would type it.
    const walk = (lines: string[]) => spawnSync('bash', ['-e', '-c', lines.join('\n')], { cwd: clone, encoding: 'utf8', env: { ...process.env, HOME: clone }, timeout: 60_000 });
    const kubectlLines = second!.filter((l) => !l.startsWith('cat '));
    const shown = walk(kubectlLines);
    expect(shown.status, shown.stderr).toBe(0);
    for (const team of ['admins', 'auditors', 'payments', 'platform']) expect(shown.stdout).toMatch(new RegExp(`^${team}\\s`, 'm'));
    expect(shown.stdout).toMatch(/^payments-ci\s/m);
    expect(shown.stdout).toContain('team.management.service/platform patched');
    expect(shown.stdout).toMatch(/^Username\s+admin$/m);
    // A clean install and start: no engine warning from npm, no deprecation from node or fastify.
    expect(err).not.toContain('EBADENGINE');
    expect(err).not.toMatch(/DeprecationWarning|FSTDEP\d+|\(node:\d+\) Warning/);
    // The daemon sees the change and reports it as drift, naming kubectl.
    const report = join(clone, '.teamkeys/sync/report.md');
    const until = Date.now() + 20_000;
    while (!readFileSync(report, 'utf8').includes('drift')) {
      if (Date.now() > until) throw new Error(`no drift in the report:\n${readFileSync(report, 'utf8')}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    const cat = walk(second!.filter((l) => l.startsWith('cat ')));
    // Named by person: the sidecar reads its own server's audit trail.
    expect(cat.stdout).toContain('**drift**: changed spec.displayName: admin (key admin) via kubectl-patch at ');
    expect(cat.stdout).toContain('`spec.displayName`: `Changed by hand` → `Platform`');

    // The next section, on the same state as a reader who did the first one: its kubectl lines
    // (all but the endless --watch) work in the order written.
    const serveSection = shellBlocks(readFileSync(join(root, 'README.md'), 'utf8'))[3]!;
    expect(serveSection).toContain('kubectl apply -f examples/gitops/teams -f examples/gitops/accesskeys');
    const next = walk(serveSection.filter((l) => !l.includes('--watch')));
    expect(next.status, next.stderr).toBe(0);
    expect(next.stdout).toContain('team.management.service/platform configured');
    expect(next.stdout).toMatch(/^yes$/m);
  }, 300_000);
});
