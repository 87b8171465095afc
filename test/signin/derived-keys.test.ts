/**
 * Keys made with a Login key end with that sign-in, against a real OpenID provider process and the
 * real kubectl: such a key carries the server's ownerReference to the Login key (a key made with
 * it too, and no key made otherwise), its maker may not cut that reference, the provider disabling
 * the user refuses it (401) within a refresh and ends its open watch, and a re-login, a logout or
 * an orphaning delete of the Login key removes it. The steps share one server and provider and run
 * in order.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../support/serve-process.js';
import { startSignInWorld, type SignInWorld } from '../support/signin-world.js';
import { openWatch } from '../server/watch-client.js';
import { eventually, signedInName } from './fixture.js';

let world: SignInWorld;
const ended = 'the sign-in this key was made with has ended: run teamkeys login';

const login = async () => {
  const r = await world.login('cy');
  expect(r.code, r.stderr).toBe(0);
  return world.cachedLogin();
};
const withToken = (token: string | undefined, args: string[], input?: string) =>
  kubectl(world.served, token ? [...args, '--token', token] : args, input === undefined ? {} : { input });
/** Creates a plain key for cy with `token` (the admin's when undefined), expiring no later than the key that makes it. */
function makeKey(token: string | undefined, name: string, ttl = 3600): { key: string; ownerReferences?: { kind: string; name: string; uid: string }[] } {
  const body = JSON.stringify({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name }, spec: { user: signedInName(world.provider, 'cy'), ttl } });
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
    world = await startSignInWorld({ users: { cy: { groups: ['everyone'] } }, serve: () => ['--identity-refresh-interval', '1s'] });
  }, 60_000);
  afterAll(() => world?.stop());

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
    const watch = await openWatch(`${world.served.url}/apis/management.service/v1/teams?watch=true`, plain, { ca: readFileSync(world.serverCa) });
    try {
      expect(watch.status).toBe(200);
      await world.provider.setUser('cy', { groups: ['everyone'], disabled: true });
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
    await world.provider.setUser('cy', { groups: ['everyone'] });
    const second = await login();
    expect(second.name).not.toBe(first.name);
    await eventually('the keys made with the replaced Login key are gone', () => gone('cy-plain') && gone('cy-chained'));
    expect(gone('cy-released')).toBe(false);
  });

  it('logout: the key made with the Login key is garbage-collected', async () => {
    makeKey((await login()).key, 'cy-until-logout');
    const out = world.cli(['logout']);
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
