/**
 * Issue 40, point 3, over real processes: after logout, the hint kubectl shows (from `teamkeys
 * credential`) is a command that works as printed, with the CA the kubeconfig trusts the server by;
 * and `teamkeys login` checks it can reach the server (TLS included) before it sends anyone to the
 * provider, instead of failing after the person has signed in and consented.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { startSignInWorld, type SignInWorld } from '../support/signin-world.js';
import { signedInName, teamkeysLogin } from './fixture.js';

let world: SignInWorld;

/** The words of a printed shell command (the hint quotes a word only when it must). */
const words = (command: string) => [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!));

describe('signing in again after logout', () => {
  beforeAll(async () => {
    world = await startSignInWorld({ users: { ana: { groups: ['everyone'], name: 'Ana Lima' } } });
  }, 60_000);
  afterAll(() => world?.stop());

  it("the hint kubectl shows with no sign-in is a command that works as printed, with the kubeconfig's CA", async () => {
    // kubectl runs the plugin as `teamkeys login --kubeconfig` wrote it: --server and --ca-file.
    const { served, serverCa, provider } = world;
    const plugin = world.cli(['credential']);
    expect(plugin.code).toBe(1);
    const hint = plugin.stderr.match(/^teamkeys: no valid sign-in for \S+: run (teamkeys login .*)$/m)?.[1];
    expect(hint, plugin.stderr).toBeDefined();
    const [program, command, ...args] = words(hint!);
    expect([program, command]).toEqual(['teamkeys', 'login']);
    expect(args).toEqual(['--server', served.url, '--ca-file', serverCa]);
    const r = await teamkeysLogin(world.browser, 'ana', args, world.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(` as ${signedInName(provider, 'ana')} (access key login-ana-`);
  }, 60_000);

  it('teamkeys login without the CA stops before the provider: one line naming --ca-file, no sign-in address', () => {
    const { served } = world;
    const r = teamkeys(['login', '--no-browser', '--server', served.url], { env: world.env });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).not.toMatch(/Open this address|https:\/\//);
    expect(r.stderr).toMatch(new RegExp(`^error: cannot reach ${new URL(served.url).origin.replace(/[.]/g, '\\.')}: its certificate is not trusted: give --ca-file`));
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('teamkeys login to a server that is not running says so before the provider', () => {
    const r = teamkeys(['login', '--no-browser', '--device', '--server', 'https://127.0.0.1:1/kubernetes/management'], { env: world.env });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: cannot reach https:\/\/127\.0\.0\.1:1: connection refused/);
  });

  it('teamkeys login over plain http to another machine is refused before anything is sent; to this machine it goes on', () => {
    const r = teamkeys(['login', '--no-browser', '--server', 'http://teamkeys.example.invalid:8080'], { env: world.env });
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toBe("error: --server http://teamkeys.example.invalid:8080: a sign-in over plain http to another machine would send its key in clear text; use the server's https address\n");
    const local = teamkeys(['login', '--no-browser', '--server', 'http://127.0.0.1:1'], { env: world.env });
    expect(local.stderr).toMatch(/^error: cannot reach http:\/\/127\.0\.0\.1:1: connection refused/);
  });
});

