/**
 * SLOW (about a minute, most of it npm resolving ~190 packages): the package as an operator gets
 * it. `npm pack` of this repository (of the dist/ the suite built), installed into an empty folder
 * as README "Install the CLI outside a clone" says, must ship what its docs link to, install with
 * no engine warning on Node 20, and run `teamkeys serve` and `teamkeys validate` on the packaged
 * examples. npm reads its cache first (--prefer-offline); better-sqlite3's install script finds a
 * local prebuild made from the binary this checkout already compiled (support/prebuilt.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../support/cli.js';
import { compiledSqlite, localPrebuild } from '../support/prebuilt.js';

const work = mkdtempSync(join(tmpdir(), 'teamkeys-tarball-'));
const install = join(work, 'install');
const bin = join(install, 'node_modules/.bin/teamkeys');
const pkgDir = join(install, 'node_modules/teamkeys');

/** Runs a command to its end; npm inherits this process's environment (its cache, its registry). */
function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 240_000, env: { ...process.env, TEAMKEYS_STORE: '', ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, out: `${r.stdout}\n${r.stderr}` };
}

/** Relative links of README.md and docs/*.md that point at files of the repository. */
function docLinks(): string[] {
  const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const links = new Set<string>();
  for (const doc of docs) {
    for (const m of readFileSync(join(root, doc), 'utf8').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(m[1]!)) continue;
      links.add(normalize(join(dirname(doc), m[1]!)).replace(/\/$/, ''));
    }
  }
  return [...links].sort();
}

describe('the packed tarball, installed into an empty folder (slow: npm install)', () => {
  let files: string[] = [];
  let installed: ReturnType<typeof run>;

  beforeAll(() => {
    // dist/ is what the suite built; packing without scripts ships exactly it.
    const packed = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], root);
    expect(packed.code, packed.stderr).toBe(0);
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    files = info!.files.map((f) => f.path);
    mkdirSync(install);
    writeFileSync(join(install, 'package.json'), '{ "name": "operator", "private": true }\n');
    installed = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--foreground-scripts', join(work, info!.filename)], install, localPrebuild(work).env);
    expect(installed.code, installed.out.slice(-4000)).toBe(0);
    expect(compiledSqlite(install), 'npm install compiled better-sqlite3 rather than taking the local prebuild').toBe(false);
  }, 300_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('ships the examples, the Action, the licence and everything the docs link to', () => {
    for (const f of ['LICENSE', 'action.yml', 'dist-action/index.mjs', 'examples/github/teamkeys.yml', 'examples/gitops/teams/platform.yaml', 'examples/policies/team-owner.yaml', 'dist/build-info.json']) {
      expect(files, f).toContain(f);
    }
    for (const link of docLinks()) expect(files.some((f) => f === link || f.startsWith(`${link}/`)), `${link} is linked from the docs but not in the package`).toBe(true);
    expect(readFileSync(join(pkgDir, 'LICENSE'), 'utf8')).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(readFileSync(join(pkgDir, 'LICENSE'), 'utf8')).toContain('END OF TERMS AND CONDITIONS');
  });

  it('installs on this Node without an engine warning, and with no GitHub Action libraries (they are bundled in dist-action)', () => {
    expect(installed.out).not.toContain('EBADENGINE');
    expect(existsSync(join(install, 'node_modules/@actions/core'))).toBe(false);
    expect(existsSync(join(install, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'))).toBe(true);
  });

  it('validates the packaged examples against the packaged policies', () => {
    const r = run(bin, ['validate', '--source', join(pkgDir, 'examples/gitops'), '--policy', join(pkgDir, 'examples/policies')], install);
    expect(r.code, r.out).toBe(0);
    expect(r.stdout).toMatch(/^The manifests are valid: checked 5 objects/);
  });

  it('serves: /healthz answers ok over its own certificate', async () => {
    const child = spawn(bin, ['serve', '--listen', '127.0.0.1:0'], { cwd: install, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TEAMKEYS_STORE: '', TEAMKEYS_ADMIN_KEY: '' } });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`teamkeys serve did not start:\n${stderr}`)), 30_000);
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const m = line.match(/^teamkeys serving on (\S+)$/);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        child.on('exit', (code) => reject(new Error(`teamkeys serve exited with ${code}:\n${stderr}`)));
      });
      const health = new URL('/healthz', url);
      const ca = readFileSync(join(install, '.teamkeys/tls/cert.pem'));
      const body = await new Promise<{ status?: number; text: string }>((resolve, reject) => {
        request(health, { ca }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ ...(res.statusCode ? { status: res.statusCode } : {}), text }));
        })
          .on('error', reject)
          .end();
      });
      expect(body).toEqual({ status: 200, text: 'ok' });
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    expect(stderr).not.toMatch(/DeprecationWarning|\(node:\d+\) Warning/);
  }, 60_000);
});
