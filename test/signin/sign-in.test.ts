/**
 * Sign-in end to end, against a real OpenID provider process and the real kubectl: `teamkeys login
 * --no-browser` -> provider -> server -> CLI; kubectl through `teamkeys credential`; the identity
 * following the provider's groups; a disabled user's key refused; the provider down; logout. The
 * steps share one server and provider and run in order.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, type Served } from '../support/serve-process.js';
import { apiRoot } from '../../src/api/resources.js';
import { startSignInWorld, type SignInWorld } from '../support/signin-world.js';
import { openWatch, type Watching } from '../server/watch-client.js';
import { Browser, eventually, literally, signedInName, startCli, type TestProvider } from './fixture.js';

let world: SignInWorld;
let provider: TestProvider;
let served: Served;
let browser: Browser;
let home: string;
let kubeconfig: string;
let auditLog: string;
let env: SignInWorld['env'];
let serverCa: string;

/** `teamkeys login --no-browser` with the person signing in as `user` in the shared browser. */
const login = (user: string, extra: string[] = []) => world.login(user, extra);

/** A watch on teams opened with `key`, as kubectl get teams -w would. */
const watchTeams = (key: string) => openWatch(`${served.url}/apis/management.service/v1/teams?watch=true`, key, { ca: readFileSync(serverCa) });
/** The watch ends (the server closes it) within a few seconds, its last event the ERROR it ends on. */
async function endsWith(w: Watching): Promise<Record<string, unknown>> {
  await w.ended(5_000);
  expect(w.endedAt, 'the watch was still open 5 s later').toBeDefined();
  const last = w.events.at(-1);
  expect(last?.type).toBe('ERROR');
  return last!.object as Record<string, unknown>;
}

const asUser = (args: string[]) => kubectl(served, args, { kubeconfig, env });
const asAdmin = (args: string[], input?: string) => kubectl(served, args, input === undefined ? {} : { input });
/** Every Login key value the CLI was given, to look for where none may be. */
const seenKeys = new Set<string>();
function cachedLogin(): { key: string; name: string } {
  const login = world.cachedLogin();
  seenKeys.add(login.key);
  return login;
}

describe('sign-in with SSO, end to end', () => {
  beforeAll(async () => {
    world = await startSignInWorld({
      users: { ana: { groups: ['payments-devs', 'everyone'], name: 'Ana Lima' } },
      serve: (dir) => ['--store', `sqlite:${join(dir, 'db', 'teamkeys.db')}`, '--identity-refresh-interval', '1s', '--audit-log', join(dir, 'audit.jsonl')],
    });
    ({ provider, served, browser, home, env, serverCa } = world);
    kubeconfig = join(home, 'kubeconfig');
    auditLog = join(home, 'audit.jsonl');
    const team = (name: string, groups: string[], roles: string[]) =>
      JSON.stringify({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name }, spec: { groups, clusterRoles: roles.map((r) => ({ name: r })) } });
    expect(asAdmin(['apply', '-f', '-'], team('payments', ['payments-devs'], ['teams-viewer', 'teams-creator'])).code).toBe(0);
  }, 60_000);

  afterAll(() => world?.stop());

  it('teamkeys login --no-browser prints the address, and the browser round trip gives the CLI its key', async () => {
    const r = await login('ana', ['--kubeconfig', kubeconfig]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.page.status).toBe(200);
    expect(r.page.body).toContain(`Signed in to teamkeys as ${signedInName(provider, 'ana')}`);
    expect(r.stdout).toMatch(new RegExp(`Signed in to https://127\\.0\\.0\\.1:\\d+/kubernetes/management as ${literally(signedInName(provider, 'ana'))} \\(access key login-ana-\\w+\\)`));
    const cacheDir = join(home, 'config/teamkeys/logins');
    const file = join(cacheDir, readdirSync(cacheDir)[0]!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    // The key travelled in no URL the browser saw.
    const { key } = cachedLogin();
    expect(key).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    expect(browser.urls.some((u) => u.includes(key))).toBe(false);
  });

  it('the Login key carries the identity from the provider, with its type, for kubectl get oak', () => {
    const { name } = cachedLogin();
    const r = asAdmin(['get', 'ownedaccesskeys', name, '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const key = JSON.parse(r.stdout) as { spec: Record<string, unknown> & { identity: Record<string, unknown> } };
    expect(key.spec).toMatchObject({ user: signedInName(provider, 'ana'), type: 'Login', ttl: 20 * 24 * 3600, ttlAfterLastActivity: true });
    expect(key.spec.identity).toEqual({
      userId: 'ana',
      username: signedInName(provider, 'ana'),
      preferredUsername: 'ana',
      email: 'ana@example.test',
      emailVerified: true,
      groups: ['everyone', 'payments-devs'],
      connector: 'oidc',
      extraClaims: { name: 'Ana Lima', locale: 'en' },
    });
    expect(key.spec.identityRefresh).toMatch(/^\d{4}-\d\d-\d\dT/);
    const table = asUser(['get', 'ownedaccesskeys']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(name);
  });

  it('kubectl with the written kubeconfig: whoami shows the user and the provider groups; get teams and can-i follow the team', () => {
    const whoami = asUser(['auth', 'whoami', '-o', 'json']);
    expect(whoami.code, whoami.stderr).toBe(0);
    const info = JSON.parse(whoami.stdout) as { status: { userInfo: { username: string; groups: string[] } } };
    expect(info.status.userInfo.username).toBe(signedInName(provider, 'ana'));
    expect(info.status.userInfo.groups).toEqual(expect.arrayContaining(['payments-devs', 'everyone']));
    const teams = asUser(['get', 'teams', '-o', 'name']);
    expect(teams.code, teams.stderr).toBe(0);
    expect(teams.stdout).toContain('payments');
    expect(asUser(['auth', 'can-i', 'create', 'teams']).stdout.trim()).toBe('yes');
    // The same context pointed at another server (kubectl --server): the plugin gives it no key.
    const elsewhere = asUser(['--server', 'https://127.0.0.1:9', 'get', 'teams']);
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toContain(`teamkeys credential: kubectl is calling https://127.0.0.1:9, not ${apiRoot(served.url)}: the key of a sign-in there is given to no other server`);
  });

  it('the group removed at the provider: after a refresh the right is gone', async () => {
    await provider.setUser('ana', { groups: ['everyone'], name: 'Ana Lima' });
    await eventually('can-i create teams says no', () => asUser(['auth', 'can-i', 'create', 'teams']).stdout.trim() === 'no');
    const whoami = JSON.parse(asUser(['auth', 'whoami', '-o', 'json']).stdout) as { status: { userInfo: { groups: string[] } } };
    expect(whoami.status.userInfo.groups).not.toContain('payments-devs');
  });

  it('the provider down: the key keeps working while refreshes fail', async () => {
    await provider.down();
    const { name } = cachedLogin();
    await eventually('a refresh failed to reach the provider', () => readFileSync(auditLog, 'utf8').includes('"signin.management.service/refresh-outcome":"unreachable"'));
    const key = JSON.parse(asAdmin(['get', 'ownedaccesskeys', name, '-o', 'json']).stdout) as { metadata: { annotations: Record<string, string> } };
    expect(key.metadata.annotations['signin.management.service/refresh-error']).toMatch(/the identity provider could not be reached/);
    expect(asUser(['get', 'teams']).code).toBe(0);
    await provider.up();
    await eventually('the refresh succeeds again', () => {
      const k = JSON.parse(asAdmin(['get', 'ownedaccesskeys', name, '-o', 'json']).stdout) as { metadata: { annotations?: Record<string, string> } };
      return k.metadata.annotations?.['signin.management.service/refresh-error'] === undefined;
    });
  });

  it('the user disabled at the provider: 401 with the reason after a refresh, and the open watch of the key ends on it', async () => {
    const watch = await watchTeams(cachedLogin().key);
    try {
      expect(watch.status).toBe(200);
      await provider.setUser('ana', { groups: ['everyone'], disabled: true });
      await eventually('kubectl is refused', () => asUser(['get', 'teams']).code !== 0);
      const r = asUser(['get', 'teams']);
      expect(r.stderr).toContain('the identity provider refused to refresh this sign-in: run teamkeys login');
      expect(await endsWith(watch)).toMatchObject({
        kind: 'Status',
        code: 401,
        reason: 'Unauthorized',
        message: 'the identity provider refused to refresh this sign-in: run teamkeys login',
      });
    } finally {
      watch.close();
    }
  });

  it('logging in again replaces the previous Login key; logout deletes the new one: 401, and the open watch of that key ends', async () => {
    const before = cachedLogin();
    await provider.setUser('ana', { groups: ['payments-devs'] });
    const again = await login('ana');
    expect(again.code, again.stderr).toBe(0);
    const after = cachedLogin();
    expect(after.name).not.toBe(before.name);
    expect(asAdmin(['get', 'ownedaccesskeys', before.name]).stderr).toContain('NotFound');
    expect(asUser(['auth', 'can-i', 'create', 'teams']).stdout.trim()).toBe('yes');
    const watch = await watchTeams(after.key);
    try {
      expect(watch.status).toBe(200);
      const out = spawnLogout();
      expect(out).toContain(`deleted access key ${after.name} on the server`);
      expect(kubectl(served, ['get', 'teams', '--token', after.key], { kubeconfig: served.kubeconfig }).stderr).toContain('Unauthorized');
      expect(await endsWith(watch)).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
    } finally {
      watch.close();
    }
    expect(asAdmin(['get', 'ownedaccesskeys', after.name]).stderr).toContain('NotFound');
  });

  it("teamkeys login --device: the person approves the provider's code in a browser; the CLI gets its key", async () => {
    const login = await startCli(['login', '--server', served.url, '--ca-file', serverCa, '--device'], env, /^\(or open (\S+)\)$/);
    const deviceBrowser = new Browser([readFileSync(provider.caFile)]);
    await deviceBrowser.signIn(login.match[1]!, 'ana').finally(() => deviceBrowser.close());
    const { code, stdout, stderr } = await login.done;
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^To sign in, open https:\/\/127\.0\.0\.1:\d+\/device and enter the code \S+$/m);
    expect(stdout).toMatch(new RegExp(`Signed in to \\S+ as ${literally(signedInName(provider, 'ana'))} \\(access key login-ana-\\w+\\)`));
    const { key } = cachedLogin();
    const whoami = kubectl(served, ['auth', 'whoami', '-o', 'json', '--token', key], { kubeconfig: served.kubeconfig });
    expect(JSON.parse(whoami.stdout)).toMatchObject({ status: { userInfo: { username: signedInName(provider, 'ana') } } });
  }, 60_000);

  it('a refresh that names the person differently is refused: 401 with the reason, and the reason on the key', async () => {
    const { key, name } = cachedLogin();
    const withKey = () => kubectl(served, ['get', 'teams', '--token', key], { kubeconfig: served.kubeconfig });
    expect(withKey().code).toBe(0);
    await provider.setUser('ana', { groups: ['payments-devs'], username: 'ana-renamed' });
    try {
      await eventually('the key is refused', () => withKey().code !== 0);
      expect(withKey().stderr).toContain('the identity provider refused to refresh this sign-in: run teamkeys login');
      const refused = JSON.parse(asAdmin(['get', 'ownedaccesskeys', name, '-o', 'json']).stdout) as { metadata: { annotations: Record<string, string> } };
      expect(refused.metadata.annotations['signin.management.service/refresh-refused']).toMatch(/the identity provider now names this person \S*ana-renamed$/);
    } finally {
      await provider.setUser('ana', { groups: ['payments-devs'] });
    }
  });

  it('teamkeys credential with no valid key in an interactive kubectl session signs in first, talking on stderr', async () => {
    const fresh = { XDG_CONFIG_HOME: join(home, 'config-credential'), KUBERNETES_EXEC_INFO: JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: { interactive: true } }), PATH: '/nonexistent' };
    const run = await startCli(['credential', '--server', served.url, '--ca-file', serverCa], fresh, /^https:\/\/\S+$/, 'stderr');
    const person = new Browser([readFileSync(provider.caFile), readFileSync(serverCa)]);
    await person.signIn(run.match[0], 'ana').finally(() => person.close());
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('Signed in to');
    const credential = JSON.parse(stdout) as { kind: string; status: { token: string } };
    expect(credential.kind).toBe('ExecCredential');
    seenKeys.add(credential.status.token);
    expect(kubectl(served, ['auth', 'whoami', '--token', credential.status.token], { kubeconfig: served.kubeconfig }).stdout).toContain(signedInName(provider, 'ana'));
  });

  it('every sign-in and refresh outcome is counted in /metrics and the refresh outcomes are in the audit trail', () => {
    const metrics = asAdmin(['get', '--raw', '/metrics']);
    expect(metrics.code, metrics.stderr).toBe(0);
    for (const outcome of ['refreshed', 'unreachable', 'refused']) expect(metrics.stdout).toMatch(new RegExp(`^teamkeys_identity_refresh_total\\{outcome="${outcome}"\\} [1-9]`, 'm'));
    expect(metrics.stdout).toMatch(/^teamkeys_signin_total\{result="success"\} 4$/m);
    const audit = readFileSync(auditLog, 'utf8');
    for (const outcome of ['refreshed', 'unreachable', 'refused']) expect(audit).toContain(`"signin.management.service/refresh-outcome":"${outcome}"`);
  });

  it('no key value in a log line or the audit trail, and neither keys nor refresh tokens in the database bytes', async () => {
    const tokens = await provider.refreshTokens();
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    const secrets = [served.adminKey, ...seenKeys, ...tokens];
    expect(seenKeys.size).toBe(4);
    const dbDir = join(home, 'db');
    const haystacks = [served.stderr(), served.stdout(), readFileSync(auditLog, 'utf8'), ...readdirSync(dbDir).map((f) => readFileSync(join(dbDir, f)).toString('latin1'))];
    for (const secret of secrets) for (const h of haystacks) expect(h.includes(secret)).toBe(false);
    expect(haystacks.some((h) => h.includes('refreshToken'))).toBe(false);
  });
});

function spawnLogout(): string {
  const r = world.cli(['logout']);
  return r.stdout + r.stderr;
}
