/**
 * `teamkeys validate` (and --help) load none of the server's modules: they work on a machine where
 * those are missing (a native build of better-sqlite3 that failed, an install without them), and
 * they start fast because nothing of the server is read. The built CLI runs with a module hook that
 * makes every server-only package unresolvable, as if it were not installed: by its name where it
 * stays in node_modules, and as the bundle's files that hold it where it is bundled
 * (dist/bundle-packages.json, written by scripts/bundle-cli.mjs).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bin, root } from '../support/cli.js';

/** Which packages each file of the CLI's bundle holds, by its path from the root. */
function bundledPackages(): Record<string, string[]> {
  return JSON.parse(readFileSync(join(root, 'dist/bundle-packages.json'), 'utf8')) as Record<string, string[]>;
}

/** What only serve, watch, plan/apply or the embedded store need. */
const serverOnly = ['openid-client', 'undici', 'oidc-provider', 'fastify', 'better-sqlite3', 'pg', 'pino', 'pino-pretty', 'simple-git', '@bufbuild/cel', '@bufbuild/protobuf', 'prom-client', 'libsodium-wrappers', '@actions/core', '@actions/github', 'chokidar', 'selfsigned', 'fast-json-patch'];

/** What kubectl's credential plugin must not load either: it runs before every kubectl command. */
const notForCredential = [...serverOnly, 'commander', 'yaml', 'ajv', 'ajv-formats', 'diff'];

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-lazy-'));

/** A module hook that makes `hidden` packages unresolvable, and the --import file that registers it. */
function hider(name: string, hidden: string[]): string {
  const hooks = join(dir, `${name}-hooks.mjs`);
  writeFileSync(
    hooks,
    `const missing = ${JSON.stringify(hidden)};
const bundled = ${JSON.stringify(bundledPackages())};
const root = ${JSON.stringify(`file://${root}/`.replace(/\/+$/, '/'))};
function hide(name) {
  const err = new Error('Cannot find package ' + JSON.stringify(name) + ' (hidden by the test)');
  err.code = 'ERR_MODULE_NOT_FOUND';
  throw err;
}
export async function resolve(specifier, context, next) {
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
  if (missing.includes(name)) hide(name);
  const resolved = await next(specifier, context);
  const held = resolved.url.startsWith(root) ? bundled[resolved.url.slice(root.length)] ?? [] : [];
  for (const p of held) if (missing.includes(p)) hide(p);
  return resolved;
}
`,
  );
  const register = join(dir, `${name}-register.mjs`);
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hooks}`)});\n`);
  return register;
}
const register = hider('server', serverOnly);

/** The built CLI with the server-only packages missing (and `register`'s packages). */
function withoutServer(args: string[], env: Record<string, string> = {}, hook = register) {
  const r = spawnSync(process.execPath, ['--import', hook, bin, ...args], { cwd: root, encoding: 'utf8', timeout: 30_000, env: { ...process.env, TEAMKEYS_STORE: '', ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the CLI loads server modules only for the commands that need them', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('validate of a valid file exits 0 and says so', () => {
    const r = withoutServer(['validate', 'examples/gitops/teams/platform.yaml', 'examples/gitops/accesskeys/ci.yaml']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('The manifests are valid: checked 4 objects (2 OwnedAccessKeys, 2 Teams) from examples/gitops/teams/platform.yaml, examples/gitops/accesskeys/ci.yaml.\n');
  });

  it('validate of an invalid file reports file:line:col and exits 1', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: bad\nspec:\n  users: ana\n');
    const r = withoutServer(['validate', file, '--output', 'json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { outcome: string; errors: { line: number; column: number; message: string }[] };
    expect(report.outcome).toBe('invalid');
    expect(report.errors).toEqual([expect.objectContaining({ line: 6, column: 10, message: expect.stringContaining('spec.users in body must be of type array') })]);
  });

  it('--help of the program and of every command works', () => {
    for (const args of [['--help'], ['validate', '--help'], ['serve', '--help'], ['apply', '--help'], ['watch', '--help'], ['get', '--help'], ['keys', '--help'], ['diff', '--help'], ['sync', '--help'], ['version', '--help'], ['completion', '--help']]) {
      const r = withoutServer(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/^Usage: teamkeys/);
    }
  });

  it('credential (kubectl runs it on every command) loads neither the server nor commander, yaml or ajv', () => {
    const config = join(dir, 'config');
    const server = 'https://teamkeys.example:8443/kubernetes/management';
    mkdirSync(join(config, 'teamkeys', 'logins'), { recursive: true });
    const login = { server, name: 'login-ana-x1', key: 'k'.repeat(64), user: 'ana', ttlSeconds: 3600, expirationTimestamp: '2999-01-01T00:00:00Z' };
    writeFileSync(join(config, 'teamkeys', 'logins', 'https_teamkeys.example_8443_kubernetes_management.json'), JSON.stringify(login));
    const r = withoutServer(['credential', '--server', 'https://teamkeys.example:8443'], { XDG_CONFIG_HOME: config }, hider('credential', notForCredential));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const credential = JSON.parse(r.stdout) as { apiVersion: string; kind: string; status: { token: string; expirationTimestamp: string } };
    expect(credential).toMatchObject({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: login.key } });
    // The key's ttl counts from its last use: kubectl is about to use it.
    expect(Date.parse(credential.status.expirationTimestamp)).toBeGreaterThan(Date.now() + 3500_000);
    const none = withoutServer(['credential', '--server', 'https://elsewhere.example'], { XDG_CONFIG_HOME: config, KUBERNETES_EXEC_INFO: '{"spec":{"interactive":false}}' });
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('teamkeys: no valid sign-in for https://elsewhere.example: run teamkeys login --server https://elsewhere.example\n');
    // kubectl says which cluster it calls (provideClusterInfo): another one (kubectl --server
    // https://other with this context) gets no key; the one the credential is for gets it.
    const calling = (server: string) => ({ XDG_CONFIG_HOME: config, KUBERNETES_EXEC_INFO: JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: { interactive: false, cluster: { server } } }) });
    const elsewhere = withoutServer(['credential', '--server', 'https://teamkeys.example:8443'], calling('https://127.0.0.1:6443'));
    expect([elsewhere.code, elsewhere.stdout]).toEqual([1, '']);
    expect(elsewhere.stderr).toBe('teamkeys credential: kubectl is calling https://127.0.0.1:6443, not https://teamkeys.example:8443/kubernetes/management: the key of a sign-in there is given to no other server\n');
    const same = withoutServer(['credential', '--server', 'https://teamkeys.example:8443'], calling('https://teamkeys.example:8443/kubernetes/management'));
    expect(same.code, same.stderr).toBe(0);
    expect((JSON.parse(same.stdout) as { status: { token: string } }).status.token).toBe(login.key);
  });

  it('version and completion scripts need none of them', () => {
    const version = withoutServer(['version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toMatch(/^teamkeys \d+\.\d+\.\d+ \(commit /);
    for (const shell of ['bash', 'zsh', 'fish']) {
      const r = withoutServer(['completion', shell]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('teamkeys');
    }
  });

  it('a command that needs the store does load it (the hook hides what it claims to)', () => {
    const r = withoutServer(['get', 'teams', '--store', 'memory:']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/hidden by the test/);
  });

  it('the hook hides a package inside the bundle too: serve, which needs fastify (bundled), cannot start without it', () => {
    // fastify is bundled (dist/bundle-packages.json names the chunk holding it), not resolved by name.
    expect(Object.values(bundledPackages()).some((p) => p.includes('fastify'))).toBe(true);
    const r = withoutServer(['serve', '--listen', '127.0.0.1:0', '--store', 'memory:'], {}, hider('fastify', ['fastify']));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Cannot find package "fastify" \(hidden by the test\)/);
  });
});
