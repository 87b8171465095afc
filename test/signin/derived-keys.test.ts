/**
 * Keys made with a Login key end with that sign-in, against a real OpenID provider process and the
 * real kubectl: such a key carries the server's ownerReference to the Login key (a key made with
 * it too, and no key made otherwise), its maker may not cut that reference, the provider disabling
 * the user refuses it (401) within a refresh and ends its open watch, and a re-login, a logout or
 * an orphaning delete of the Login key removes it. The steps share one server and provider and run
 * in order.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin } from '../support/cli.js';
import { kubectl, startServe, type Served } from '../server/serve-process.js';
import { openWatch } from '../server/watch-client.js';
import { Browser, eventually, oidcFlags, signedInName, startProvider, teamkeysLogin, type TestProvider } from './fixture.js';

let provider: TestProvider;
let served: Served;
let browser: Browser;
const home = mkdtempSync(join(tmpdir(), 'teamkeys-sso-derived-'));
const env = { XDG_CONFIG_HOME: join(home, 'config') };
let serverCa: string;
const ended = 'the sign-in this key was made with has ended: run teamkeys login';

const login = async () => {
  const r = await teamkeysLogin(browser, 'cy', ['--server', served.url, '--ca-file', serverCa], env);
  expect(r.code, r.stderr).toBe(0);
  const dir = join(home, 'config/teamkeys/logins');
  return JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]!), 'utf8')) as { key: string; name: string; uid?: string };
};
const withToken = (token: string | undefined, args: string[], input?: string) =>
  kubectl(served, token ? [...args, '--token', token] : args, input === undefined ? {} : { input });
/** Creates a plain key for cy with `token` (the admin's when undefined), expiring no later than the key that makes it. */
function makeKey(token: string | undefined, name: string, ttl = 3600): { key: string; ownerReferences?: { kind: string; name: string; uid: string }[] } {
  const body = JSON.stringify({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name }, spec: { user: signedInName(provider, 'cy'), ttl } });
  const r = withToken(token, ['create', '-f', '-', '-o', 'json'], body);
  expect(r.code, r.stderr).toBe(0);
  const made = JSON.parse(r.stdout) as { spec: { key: string }; metadata: { ownerReferences?: { kind: string; name: string; uid: string }[] } };
  return { key: made.spec.key, ...(made.metadata.ownerReferences ? { ownerReferences: made.metadata.ownerReferences } : {}) };
}
const uidOf = (name: string) => (JSON.parse(withToken(undefined, ['get', 'oak', name, '-o', 'json']).stdout) as { metadata: { uid: string } }).metadata.uid;
const gone = (name: string) => withToken(undefined, ['get', 'oak', name]).stderr.includes('NotFound');

describe('keys made with a Login key end with the sign-in', () => {
  let first: { key: string; name: string };
  let plain: string;

  beforeAll(async () => {
    provider = await startProvider();
    await provider.setUser('cy', { groups: ['everyone'] });
    served = await startServe([
      ...oidcFlags(provider),
      '--identity-refresh-interval', '1s',
    ]);
    serverCa = join(served.dir, 'tls', 'cert.pem');
    browser = new Browser([readFileSync(provider.caFile), readFileSync(serverCa)]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    await provider?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('a key created with the Login key is tied to it by an ownerReference and works; so is a key made with that key; an admin-made key is not', async () => {
    first = await login();
    const tie = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', name: first.name, uid: uidOf(first.name) };
    const made = makeKey(first.key, 'cy-plain');
    plain = made.key;
    expect(made.ownerReferences).toEqual([tie]);
    expect(withToken(plain, ['get', 'teams']).code).toBe(0);
    expect(makeKey(plain, 'cy-chained', 1800).ownerReferences).toEqual([tie]);
    expect(makeKey(undefined, 'cy-by-admin').ownerReferences).toBeUndefined();
  });

  it('its maker may not remove that reference (403); an admin may', () => {
    const r = withToken(plain, ['patch', 'oak', 'cy-plain', '--type', 'merge', '-p', '{"metadata":{"ownerReferences":null}}']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('removing the reference to the Login key this key was made with requires the accesskeys-admin role');
    makeKey(first.key, 'cy-released');
    const admin = withToken(undefined, ['patch', 'oak', 'cy-released', '--type', 'merge', '-p', '{"metadata":{"ownerReferences":null}}']);
    expect(admin.code, admin.stderr).toBe(0);
  });

  it('the user disabled at the provider: the key made with the Login key gets 401 saying why after a refresh, and its open watch ends', async () => {
    const watch = await openWatch(`${served.url}/apis/management.service/v1/teams?watch=true`, plain, { ca: readFileSync(serverCa) });
    try {
      expect(watch.status).toBe(200);
      await provider.setUser('cy', { groups: ['everyone'], disabled: true });
      await eventually('the plain key is refused', () => withToken(plain, ['get', 'teams']).code !== 0);
      expect(withToken(plain, ['get', 'teams']).stderr).toContain(ended);
      await watch.ended(5_000);
      expect(watch.events.at(-1)).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 401, message: ended } });
    } finally {
      watch.close();
    }
    // The key an admin made is not the sign-in's, nor the one an admin released.
    expect(gone('cy-by-admin')).toBe(false);
  });

  it('logging in again replaces the Login key: the keys made with the old one are garbage-collected (404 for an admin)', async () => {
    await provider.setUser('cy', { groups: ['everyone'] });
    const second = await login();
    expect(second.name).not.toBe(first.name);
    await eventually('the keys made with the replaced Login key are gone', () => gone('cy-plain') && gone('cy-chained'));
    expect(gone('cy-released')).toBe(false);
  });

  it('logout: the key made with the Login key is garbage-collected', async () => {
    makeKey((await login()).key, 'cy-until-logout');
    const out = spawnSync(process.execPath, [bin, 'logout', '--server', served.url, '--ca-file', serverCa], { env: { ...process.env, ...env }, encoding: 'utf8' });
    expect(out.stdout + out.stderr).toContain('deleted access key');
    await eventually('the key made with the Login key is gone', () => gone('cy-until-logout'));
  });

  it('deleting the Login key with --cascade=orphan still removes the keys made with it', async () => {
    const third = await login();
    makeKey(third.key, 'cy-not-orphaned');
    const r = withToken(third.key, ['delete', 'oak', third.name, '--cascade=orphan', '--wait=false']);
    expect(r.code, r.stderr).toBe(0);
    await eventually('the key made with the Login key is gone', () => gone('cy-not-orphaned') && gone(third.name));
  });
});
