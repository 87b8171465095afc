/**
 * `teamkeys serve`'s first step, flags -> ServeConfig, in-process: the flags are parsed by the real
 * declarations (registerServe) and checked by serveConfig, which reads no file and starts nothing.
 */
import { Command } from 'commander';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerServe, type ServeFlags } from '../../src/cli/commands/serve.js';
import { serveConfig } from '../../src/cli/serve-config.js';
import { teamkeys } from '../support/cli.js';

/** The options commander gives serve's handler for `args` (the handler itself is replaced: nothing runs). */
function parse(args: string[]): ServeFlags {
  const program = new Command().exitOverride();
  registerServe(program);
  const serve = program.commands.find((c) => c.name() === 'serve')!;
  let flags: ServeFlags | undefined;
  serve.action((f: ServeFlags) => {
    flags = f;
  });
  program.parse(['serve', ...args], { from: 'user' });
  return flags!;
}

const config = (args: string[], env: NodeJS.ProcessEnv = {}) => serveConfig(parse(args), env);

describe('serveConfig: flags -> config', () => {
  it('gives the defaults a bare `teamkeys serve` runs with', () => {
    const c = config([]);
    expect(c.listen).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(c.stateDir).toBe(resolve('.teamkeys'));
    expect(c.storeUrl).toBe(`sqlite:${join(resolve('.teamkeys'), 'teamkeys.db')}`);
    expect(c.tls).toEqual({ kind: 'self-signed' });
    expect(c.activityIntervalMs).toBe(60_000);
    expect(c.requestTimeoutMs).toBe(60_000);
    expect(c.expiredKeyRetentionSeconds).toBe(20 * 24 * 3600);
    expect(c.authFailureLimit).not.toBe(false);
    expect(c.maxTtlSeconds).toBeUndefined();
    expect(c.sync).toBeUndefined();
    expect(c.signIn.signIn).toBeUndefined();
  });

  it('checks --activity-interval against --disable-unused-after at start (issue 41): the window is at least two intervals', () => {
    // A key in use through another replica shows a last activity up to one interval old: a window under two would disable it.
    expect(() => config(['--activity-interval', '45m', '--disable-unused-after', '1h'])).toThrow(
      /--disable-unused-after \(1h\) must be at least twice --activity-interval \(45m\): a key's use is written at most once per interval, so a key in use through another replica could look unused to the leader/,
    );
    expect(config(['--activity-interval', '30m', '--disable-unused-after', '1h']).keyHealth.disableUnusedAfterMs).toBe(3_600_000);
    expect(config(['--disable-unused-after', '1h']).keyHealth.disableUnusedAfterMs).toBe(3_600_000);
  });

  it('takes the bounds on bodies sent without a key (default 8 per address, 32Mi for the server; at least 3Mi)', () => {
    expect(config([]).anonymousBodies).toEqual({ perClient: 8, totalBytes: 32 * 1024 * 1024 });
    expect(config(['--max-anonymous-bodies-per-address', '64', '--max-anonymous-body-bytes', '1Gi']).anonymousBodies).toEqual({ perClient: 64, totalBytes: 1024 ** 3 });
    expect(config(['--max-anonymous-body-bytes', '4194304']).anonymousBodies.totalBytes).toBe(4 * 1024 * 1024);
    expect(() => config(['--max-anonymous-body-bytes', '2Mi'])).toThrow('--max-anonymous-body-bytes must be at least 3Mi, not "2Mi"');
    expect(() => config(['--max-anonymous-body-bytes', '32MB'])).toThrow('--max-anonymous-body-bytes must be a size in bytes or with Ki, Mi or Gi (like 32Mi), not "32MB"');
    expect(() => config(['--max-anonymous-bodies-per-address', '0'])).toThrow('--max-anonymous-bodies-per-address must be a whole number above 0, not "0"');
  });

  it('takes --lease-duration (default 15s, at least 1s)', () => {
    expect(config([]).leaseTtlMs).toBe(15_000);
    expect(config(['--lease-duration', '4s']).leaseTtlMs).toBe(4_000);
    expect(() => config(['--lease-duration', '500ms'])).toThrow(/--lease-duration must be at least 1s, not "500ms"/);
  });

  it('reads the store and the administrator key from the environment it is given, the flag first', () => {
    expect(config([], { TEAMKEYS_STORE: 'memory:', TEAMKEYS_ADMIN_KEY: 'k' })).toMatchObject({ storeUrl: 'memory:', adminKey: 'k' });
    expect(config(['--store', 'sqlite:x.db'], { TEAMKEYS_STORE: 'memory:' }).storeUrl).toBe('sqlite:x.db');
  });

  it.each([
    ['90', 90_000],
    ['90s', 90_000],
    ['2m', 120_000],
    ['1500ms', 1500],
  ])('a time flag that took seconds takes %s (a bare number is seconds)', (value, ms) => {
    expect(config(['--shutdown-grace', value]).shutdownGraceMs).toBe(ms);
    expect(config(['--request-timeout', value]).requestTimeoutMs).toBe(ms);
    expect(config(['--activity-interval', value]).activityIntervalMs).toBe(ms);
    // Flags the server keeps in seconds: a part of a second counts as a whole one.
    expect(config(['--max-ttl', value]).maxTtlSeconds).toBe(Math.ceil(ms / 1000));
    expect(config(['--min-request-timeout', value]).watchLimits.minRequestTimeoutSeconds).toBe(Math.ceil(ms / 1000));
    expect(config(['--expired-key-retention', value]).expiredKeyRetentionSeconds).toBe(Math.ceil(ms / 1000));
  });

  it('reads 20d as twenty days', () => {
    expect(config(['--expired-key-retention', '20d']).expiredKeyRetentionSeconds).toBe(20 * 86400);
  });

  it('checks the sidecar flags without reading its files', () => {
    const c = config(['--sync-source', 'examples/gitops', '--sync-interval', '5m', '--webhook-secret-file', '/nonexistent/secret', '--self-heal']);
    expect(c.sync).toMatchObject({ intervalMs: 300_000, selfHeal: true, webhookSecretFile: '/nonexistent/secret', maxPrune: 50, concurrency: 8 });
    expect(c.sync?.keyDir).toBe(join(c.stateDir, 'keys'));
  });

  it.each([
    [['--shutdown-grace', 'soon'], '--shutdown-grace must be a whole number of seconds above 0 or a duration such as 30s, 5m, 90d or 500ms, not "soon"'],
    [['--request-timeout', '1.5'], '--request-timeout must be a whole number of seconds above 0 or a duration such as 30s, 5m, 90d or 500ms, not "1.5"'],
    [['--max-ttl', '0'], '--max-ttl must be a whole number of seconds above 0 or a duration such as 30s, 5m, 90d or 500ms, not "0"'],
    [['--audit-retention', '90'], '--audit-retention must be a duration such as 30s, 5m, 90d or 500ms, not "90"'],
    [['--max-watches', '0'], '--max-watches must be a whole number above 0, not "0"'],
    [['--listen', 'nowhere'], '--listen must be HOST:PORT (or [IPv6]:PORT), not "nowhere"'],
    [['--tls-cert', 'c.pem'], '--tls-cert and --tls-key go together'],
    [['--tls-cert', 'c.pem', '--tls-key', 'k.pem', '--insecure-http'], '--insecure-http and --tls-cert exclude each other'],
    [['--auth-failure-limit', 'lots'], '--auth-failure-limit must be BURST/PER_SECOND (like 50/2) or off, not "lots"'],
    [['--oidc-client-id', 'x'], '--oidc-client-id and --oidc-client-secret-file need --oidc-issuer-url'],
    [['--sync-source', '.', '--sync-max-prune', 'x'], '--sync-max-prune must be a whole number of at least 0, not "x"'],
  ])('refuses %j with a message naming the flag', (args, message) => {
    expect(() => config(args)).toThrow(message);
  });
});

describe('a time flag on the command line', () => {
  it('refuses a bad duration with exit 1 and the flag named, before anything is opened', () => {
    const r = teamkeys(['serve', '--store', 'memory:', '--insecure-http', '--listen', '127.0.0.1:0', '--min-request-timeout', '3 minutes']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: --min-request-timeout must be a whole number of seconds above 0 or a duration such as 30s, 5m, 90d or 500ms, not "3 minutes"');
  });

  it('documents the bare-seconds reading in the help', () => {
    const r = teamkeys(['serve', '--help']);
    expect(r.stdout).toMatch(/--shutdown-grace <duration>\s+after SIGTERM/);
    expect(r.stdout).toContain('a bare number is seconds');
  });
});
