/**
 * Issue 33's sign-in paths, as reported, against the real provider and `teamkeys serve`:
 * - path 4: a key rotated, PUT or patched with a new spec.key, or re-enabled (its own or a team's)
 *   with a Login key is tied to that sign-in, and stops working when the sign-in ends (logout, or the
 *   provider refusing the account);
 * - path 5: a provider account whose preferred_username is `admin`, or names a user of a Team,
 *   gains nothing that user has (names are prefixed with the issuer, as kube-apiserver's), and with
 *   no prefix such a sign-in is refused while a key outside sign-in acts for the name;
 * - path 7: sign-in counts toward --max-keys-per-user: past it, the sign-in is refused, saying so.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from '../support/serve-process.js';
import { apiCaller, cliStandIn, type CliStandIn } from './cli-stand-in.js';
import { eventually } from '../support/eventually.js';
import { oidcFlags, signedInName, startProvider, type TestProvider } from './fixture.js';

let provider: TestProvider;
let served: Served;
let cli: CliStandIn;
let api: ReturnType<typeof apiCaller>;

const group = 'management.service';
const value = (n: string) => `Path4${n}${'x'.repeat(40)}`.replace(/[^A-Za-z0-9]/g, 'z');
const admin = () => served.adminKey;
/** Whether `key` authenticates (GET of the team list answers 200, not 401). */
const works = async (key: string) => (await api(key, 'GET', '/teams')).status === 200;
/** Each step of the identity refresh takes up to one interval (1 s here). */
const refreshBound = { timeoutMs: 20_000, intervalMs: 300 };

async function makeKey(name: string, spec: Record<string, unknown>): Promise<string> {
  const key = value(name);
  const r = await api(admin(), 'POST', '/ownedaccesskeys', { apiVersion: `${group}/v1`, kind: 'OwnedAccessKey', metadata: { name }, spec: { ttl: 3600, ...spec, key } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return key;
}

async function signIn(login: string) {
  const r = await cli.signIn(login);
  expect(r.status, r.body.message).toBe(200);
  return r.body as { key: string; name: string; user: string };
}

beforeAll(async () => {
  provider = await startProvider();
}, 60_000);
afterAll(async () => provider?.stop());

describe('sign-in meets the admission chain (issue 33 paths 4, 5 and 7)', () => {
  let bob: string;

  beforeAll(async () => {
    await provider.setUser('bob', { groups: ['everyone'] });
    await provider.setUser('mallory', { groups: ['everyone'], username: 'admin' });
    await provider.setUser('carol', { groups: ['everyone'], username: 'dana' });
    served = await startServe([...oidcFlags(provider), '--identity-refresh-interval', '1s', '--max-keys-per-user', '6']);
    const cas = [readFileSync(provider.caFile), readFileSync(join(served.dir, 'tls', 'cert.pem'))];
    cli = await cliStandIn(new URL(served.url).origin, cas);
    api = apiCaller(served.url, `/apis/${group}/v1`, cas);
  }, 60_000);

  afterAll(async () => {
    await cli?.close();
    await api?.close();
    await served?.stop();
  });

  it('path 4: keys rotated, PUT or patched with a new value, or re-enabled with a Login key stop working at logout', async () => {
    const login = await signIn('bob');
    // The keys are bob's as sign-in names him; he owns team bobs, so his Login key may write its team keys.
    bob = login.user;
    const team = await api(admin(), 'POST', '/teams', { apiVersion: `${group}/v1`, kind: 'Team', metadata: { name: 'bobs' }, spec: { owner: { user: bob } } });
    expect(team.status).toBe(201);
    await makeKey('bob-rotated', { user: bob });
    await makeKey('bob-put', { user: bob });
    const teamOff = await makeKey('bobs-off', { team: 'bobs', disabled: true });
    const rotated = await api(login.key, 'POST', '/ownedaccesskeys/bob-rotated/rotation', { apiVersion: `${group}/v1`, kind: 'KeyRotation' });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    const current = (await api(login.key, 'GET', '/ownedaccesskeys/bob-put')).body;
    const put = await api(login.key, 'PUT', '/ownedaccesskeys/bob-put', { ...current, spec: { ...(current.spec as object), key: value('bob-put-2') } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const enabled = await api(login.key, 'PATCH', '/ownedaccesskeys/bobs-off', { spec: { disabled: false } }, 'application/merge-patch+json');
    expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
    const written = [(rotated.body.spec as { key: string }).key, value('bob-put-2'), teamOff];
    for (const key of written) expect(await works(key)).toBe(true);
    // Each now carries the server's tie to the Login key.
    const uid = ((await api(admin(), 'GET', `/ownedaccesskeys/${login.name}`)).body.metadata as { uid: string }).uid;
    for (const name of ['bob-rotated', 'bob-put', 'bobs-off']) {
      const refs = ((await api(admin(), 'GET', `/ownedaccesskeys/${name}`)).body.metadata as { ownerReferences?: { name: string; uid: string }[] }).ownerReferences ?? [];
      expect(refs, name).toContainEqual(expect.objectContaining({ kind: 'OwnedAccessKey', name: login.name, uid }));
    }
    // teamkeys logout deletes the Login key with itself.
    expect((await api(login.key, 'DELETE', `/ownedaccesskeys/${login.name}`)).status).toBe(200);
    for (const key of written) expect(await works(key)).toBe(false);
    await eventually('the keys written with the Login key are garbage-collected', async () => {
      for (const name of ['bob-rotated', 'bob-put', 'bobs-off']) if ((await api(admin(), 'GET', `/ownedaccesskeys/${name}`)).status !== 404) return false;
      return true;
    }, refreshBound);
  }, 60_000);

  it("path 4: a key patched with a new value with a Login key stops working when the provider refuses the account", async () => {
    const login = await signIn('bob');
    await makeKey('bob-patched', { user: bob });
    const patched = await api(login.key, 'PATCH', '/ownedaccesskeys/bob-patched', [{ op: 'add', path: '/spec/key', value: value('bob-patched-2') }], 'application/json-patch+json');
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(await works(value('bob-patched-2'))).toBe(true);
    await provider.setUser('bob', { groups: ['everyone'], disabled: true });
    try {
      await eventually('the patched key is refused once the provider refuses bob', async () => !(await works(value('bob-patched-2'))), refreshBound);
      const r = await api(value('bob-patched-2'), 'GET', '/teams');
      expect(r).toMatchObject({ status: 401, body: { message: 'the sign-in this key was made with has ended: run teamkeys login' } });
    } finally {
      await provider.setUser('bob', { groups: ['everyone'] });
    }
  }, 60_000);

  it("path 5: an account whose preferred_username is admin gains nothing of the administrator's; one naming a Team's user gains nothing of that user's", async () => {
    const team = await api(admin(), 'POST', '/teams', { apiVersion: `${group}/v1`, kind: 'Team', metadata: { name: 'danas' }, spec: { users: ['dana'], clusterRoles: [{ name: 'teams-admin' }] } });
    expect(team.status).toBe(201);
    for (const [login, name] of [['mallory', 'admin'], ['carol', 'dana']] as const) {
      const minted = await signIn(login);
      expect(minted.user).toBe(signedInName(provider, name));
      const review = await api(minted.key, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
      expect(review.status, JSON.stringify(review.body)).toBe(201);
      const info = (review.body.status as { userInfo: { username: string; groups?: string[] } }).userInfo;
      expect(info.username).toBe(signedInName(provider, name));
      expect(info.groups ?? []).not.toContain('admins');
      // The administrator and dana (teams-admin) may read and delete these teams; the namesake may not.
      expect((await api(minted.key, 'GET', '/teams/danas')).status).toBe(403);
      expect((await api(minted.key, 'DELETE', '/teams/bobs')).status).toBe(403);
    }
  }, 60_000);

  it('path 7: a sign-in past --max-keys-per-user is refused, saying so, and the user holds no more keys than the bound', async () => {
    const held = async () => ((await api(admin(), 'GET', '/ownedaccesskeys')).body.items as { spec: { user?: string } }[]).filter((k) => k.spec.user === bob).length;
    for (let i = 0; i < 6 && (await held()) < 6; i++) await signIn('bob');
    const refused = await cli.signIn('bob');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe(
      `${bob} may not sign in now: exceeded quota: "${bob}" already has 6 access keys, the most allowed (--max-keys-per-user 6); sign out elsewhere (teamkeys logout) or ask your administrator to delete one of those keys`,
    );
    expect(await held()).toBe(6);
  }, 60_000);
});

describe('with no username prefix (--oidc-username-prefix -)', () => {
  let plain: Served;
  let plainCli: CliStandIn;

  beforeAll(async () => {
    plain = await startServe([...oidcFlags(provider), '--oidc-username-prefix', '-']);
    await provider.setUser('mallory', { groups: ['everyone'], username: 'admin' });
    plainCli = await cliStandIn(new URL(plain.url).origin, [readFileSync(provider.caFile), readFileSync(join(plain.dir, 'tls', 'cert.pem'))]);
  }, 60_000);

  afterAll(async () => {
    await plainCli?.close();
    await plain?.stop();
  });

  it("path 5: an account named admin may not take the name of the administrator, whose key is outside sign-in", async () => {
    const r = await plainCli.signIn('mallory');
    expect(r).toMatchObject({
      status: 403,
      body: { message: 'admin is the name of a user with access keys outside sign-in: signing in may not take it (the server takes usernames unprefixed, --oidc-username-prefix -); ask your administrator' },
    });
  }, 60_000);
});
