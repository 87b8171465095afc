/**
 * Issue 40, point 3, over real processes: after logout, the hint kubectl shows (from `teamkeys
 * credential`) is a command that works as printed, with the CA the kubeconfig trusts the server by;
 * and `teamkeys login` checks it can reach the server (TLS included) before it sends anyone to the
 * provider, instead of failing after the person has signed in and consented.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin } from '../support/cli.js';
import { startServe, type Served } from '../server/serve-process.js';
import { Browser, oidcFlags, signedInName, startProvider, teamkeysLogin, type TestProvider } from './fixture.js';

let provider: TestProvider;
let served: Served;
let browser: Browser;
const home = mkdtempSync(join(tmpdir(), 'teamkeys-signin-hint-'));
const env = { XDG_CONFIG_HOME: join(home, 'config') };
let serverCa: string;

/** The words of a printed shell command (the hint quotes a word only when it must). */
const words = (command: string) => [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!));

describe('signing in again after logout', () => {
  beforeAll(async () => {
    provider = await startProvider();
    await provider.setUser('ana', { groups: ['everyone'], name: 'Ana Lima' });
    served = await startServe(oidcFlags(provider));
    serverCa = join(served.dir, 'tls', 'cert.pem');
    browser = new Browser([readFileSync(provider.caFile), readFileSync(serverCa)]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    await provider?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("the hint kubectl shows with no sign-in is a command that works as printed, with the kubeconfig's CA", async () => {
    // kubectl runs the plugin as `teamkeys login --kubeconfig` wrote it: --server and --ca-file.
    const plugin = spawnSync(process.execPath, [bin, 'credential', '--server', served.url, '--ca-file', serverCa], { env: { ...process.env, ...env }, encoding: 'utf8' });
    expect(plugin.status).toBe(1);
    const hint = plugin.stderr.match(/^teamkeys: no valid sign-in for \S+: run (teamkeys login .*)$/m)?.[1];
    expect(hint, plugin.stderr).toBeDefined();
    const [program, command, ...args] = words(hint!);
    expect([program, command]).toEqual(['teamkeys', 'login']);
    expect(args).toEqual(['--server', served.url, '--ca-file', serverCa]);
    const r = await teamkeysLogin(browser, 'ana', args, env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(` as ${signedInName(provider, 'ana')} (access key login-ana-`);
  }, 60_000);

  it('teamkeys login without the CA stops before the provider: one line naming --ca-file, no sign-in address', () => {
    const r = spawnSync(process.execPath, [bin, 'login', '--no-browser', '--server', served.url], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20_000 });
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).not.toMatch(/Open this address|https:\/\//);
    expect(r.stderr).toMatch(new RegExp(`^error: cannot reach ${new URL(served.url).origin.replace(/[.]/g, '\\.')}: its certificate is not trusted: give --ca-file`));
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('teamkeys login to a server that is not running says so before the provider', () => {
    const r = spawnSync(process.execPath, [bin, 'login', '--no-browser', '--device', '--server', 'https://127.0.0.1:1/kubernetes/management'], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: cannot reach https:\/\/127\.0\.0\.1:1: connection refused/);
  });
});
