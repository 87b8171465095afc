/**
 * What sign-in refuses, against the real provider and server: a person in none of the allowed
 * groups (a refusal page, no key), an unknown state, a one-time code replayed or exchanged with a
 * verifier that does not match, a redirect that is not a loopback address. The test plays the CLI
 * here, with its own loopback listener, to send what a real CLI never would.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, type Served } from '../support/serve-process.js';
import { startSignInWorld, type SignInWorld } from '../support/signin-world.js';
import { loopbackRedirect, pkcePair as verifierPair } from './cli-stand-in.js';
import { Browser, signedInName, type TestProvider } from './fixture.js';

let world: SignInWorld;
let provider: TestProvider;
let served: Served;
let cas: Buffer[];
let dispatcher: Agent;
let loopback: { redirectUri: string; close(): void };
let redirectUri: string;
let base: string;

/** Signs `user` in through the browser as a CLI would start it; the code (or error) the loopback received, and the callback as the browser sent it. */
async function signIn(user: string, challenge: string): Promise<{ page: { status: number; body: string }; received: URL; callback: { url: string; cookie: string } }> {
  const state = randomBytes(16).toString('base64url');
  const start = new URL(`${base}/auth/login`);
  for (const [k, v] of Object.entries({ redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state })) start.searchParams.set(k, v);
  // Each person with their own browser (the provider remembers who signed in through its cookies).
  const browser = new Browser(cas);
  const page = await browser.signIn(start.toString(), user).finally(() => browser.close());
  const received = new URL(browser.urls[browser.urls.length - 1]!);
  expect(received.searchParams.get('state')).toBe(state);
  const at = browser.urls.findIndex((u) => new URL(u).pathname === '/auth/callback');
  return { page, received, callback: { url: browser.urls[at]!, cookie: browser.sentCookies[at]! } };
}

const exchange = async (body: Record<string, unknown>) => {
  const res = await fetch(`${base}/auth/token`, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { message?: string; key?: string; name?: string } };
};

describe('sign-in refusals', () => {
  beforeAll(async () => {
    world = await startSignInWorld({
      users: { ana: { groups: ['payments-devs', 'everyone'] }, eve: { groups: ['marketing'] } },
      serve: () => ['--oidc-allowed-groups', 'payments-devs,platform', '--oidc-groups-prefix', 'oidc:'],
    });
    ({ provider, served, cas } = world);
    base = new URL(served.url).origin;
    dispatcher = new Agent({ connect: { ca: cas } });
    loopback = await loopbackRedirect();
    redirectUri = loopback.redirectUri;
  }, 60_000);

  afterAll(async () => {
    loopback?.close();
    await dispatcher?.close();
    await world?.stop();
  });

  it('a person in none of the allowed groups is sent back with a refusal and gets no key', async () => {
    const { received } = await signIn('eve', verifierPair().challenge);
    expect(received.searchParams.get('code')).toBeNull();
    expect(received.searchParams.get('error')).toBe('access_denied');
    expect(received.searchParams.get('error_description')).toBe('eve is in none of the groups allowed to sign in (payments-devs, platform)');
    expect(kubectl(served, ['get', 'ownedaccesskeys', '-o', 'name']).stdout).not.toContain('login-eve');
  });

  it('teamkeys login shows that person a refusal page and exits 1 with the reason', async () => {
    // The world's browser has signed no one in yet: eve's own.
    const r = await world.login('eve');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: sign-in refused: eve is in none of the groups allowed to sign in (payments-devs, platform)\n');
    expect(r.page.status).toBe(403);
    expect(r.page.body).toContain('<h1>Sign-in refused</h1><p>eve is in none of the groups allowed to sign in (payments-devs, platform)</p>');
    expect(existsSync(join(world.env.XDG_CONFIG_HOME, 'teamkeys'))).toBe(false);
  });

  it('a verifier that does not match spends the code; the right one then finds it used', async () => {
    const { challenge, verifier } = verifierPair();
    const { received } = await signIn('ana', challenge);
    const code = received.searchParams.get('code');
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const wrong = await exchange({ code, code_verifier: verifierPair().verifier, redirect_uri: redirectUri });
    expect(wrong).toMatchObject({ status: 400, body: { message: 'code_verifier does not match the code_challenge this sign-in started with' } });
    const late = await exchange({ code, code_verifier: verifier, redirect_uri: redirectUri });
    expect(late).toMatchObject({ status: 400, body: { message: 'the code is unknown, expired or already used: run teamkeys login again' } });
  });

  it("a callback is answered once: its URL and cookie replayed cost the provider's token endpoint nothing more", async () => {
    const { received, callback } = await signIn('ana', verifierPair().challenge);
    expect(received.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const replay = await fetch(callback.url, { dispatcher, redirect: 'manual', headers: { cookie: callback.cookie } });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('<h1>Cannot sign in</h1><p>This sign-in was finished already: a callback is answered once. Run teamkeys login again.</p>');
  });

  it("a callback carrying the provider's error is not remembered (it costs the provider nothing, and would push real ones out)", async () => {
    const start = new URL(`${base}/auth/login`);
    for (const [k, v] of Object.entries({ redirect_uri: redirectUri, code_challenge: verifierPair().challenge, code_challenge_method: 'S256', state: randomBytes(16).toString('base64url') })) start.searchParams.set(k, v);
    const started = await fetch(start, { dispatcher, redirect: 'manual' });
    expect(started.status).toBe(302);
    const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
    const cookie = started.headers.getSetCookie()[0]!.split(';')[0]!;
    for (let i = 0; i < 2; i++) {
      const back = await fetch(`${base}/auth/callback?state=${encodeURIComponent(state)}&error=access_denied`, { dispatcher, redirect: 'manual', headers: { cookie } });
      expect(back.status, `callback ${i + 1}`).toBe(302);
      expect(new URL(back.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
    }
  });

  it('a code is exchanged once: the replay is refused; groups are filtered by the allowed ones and prefixed', async () => {
    const { challenge, verifier } = verifierPair();
    const { received } = await signIn('ana', challenge);
    const code = received.searchParams.get('code');
    const first = await exchange({ code, code_verifier: verifier, redirect_uri: redirectUri });
    expect(first.status).toBe(200);
    expect(first.body.key).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    const replay = await exchange({ code, code_verifier: verifier, redirect_uri: redirectUri });
    expect(replay.status).toBe(400);
    const key = JSON.parse(kubectl(served, ['get', 'ownedaccesskeys', first.body.name!, '-o', 'json']).stdout) as { spec: { identity: { groups: string[] } } };
    expect(key.spec.identity.groups).toEqual(['oidc:payments-devs']);
  });

  it('two exchanges of one code at once: exactly one gets a key', async () => {
    const { challenge, verifier } = verifierPair();
    const { received } = await signIn('ana', challenge);
    const body = { code: received.searchParams.get('code'), code_verifier: verifier, redirect_uri: redirectUri };
    const both = await Promise.all([exchange(body), exchange(body)]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
  });

  it('another account of the provider with the username of someone signed in gets no key in their name', async () => {
    const ana = verifierPair();
    const first = await signIn('ana', ana.challenge);
    expect((await exchange({ code: first.received.searchParams.get('code'), code_verifier: ana.verifier, redirect_uri: redirectUri })).status).toBe(200);
    await provider.setUser('mallory', { groups: ['payments-devs'], username: 'ana' });
    const mallory = verifierPair();
    const { received } = await signIn('mallory', mallory.challenge);
    const res = await exchange({ code: received.searchParams.get('code'), code_verifier: mallory.verifier, redirect_uri: redirectUri });
    expect(res).toMatchObject({ status: 403, body: { message: `${signedInName(provider, 'ana')} is signed in with another account of the identity provider: an account that only shares the name does not sign in as them; ask your administrator` } });
    expect(res.body.key).toBeUndefined();
  });

  for (const [what, claims, complaint] of [
    ['audience', { aud: 'another-client' }, /unexpected JWT "aud" \(audience\) claim value/],
    ['issuer', { iss: 'https://another-issuer.example' }, /unexpected JWT "iss" \(issuer\) claim value/],
  ] as const) {
    it(`an ID token for another ${what}, validly signed by the provider, is refused: no code, no key`, async () => {
      await provider.forge(claims);
      try {
        const { received } = await signIn('ana', verifierPair().challenge);
        expect(received.searchParams.get('code')).toBeNull();
        expect(received.searchParams.get('error')).toBe('access_denied');
        expect(received.searchParams.get('error_description')).toMatch(complaint);
      } finally {
        await provider.forge(undefined);
      }
    });
  }

  it('a state or redirect_uri too long to keep is refused: anyone without a key cannot fill the pending sign-ins with large entries', async () => {
    for (const [field, value, complaint] of [
      ['state', 'a'.repeat(8000), 'state (at least 16 random characters) is required'],
      ['redirect_uri', `${redirectUri}?${'a'.repeat(8000)}`, 'redirect_uri must be a loopback address of this machine'],
    ] as const) {
      const query: Record<string, string> = { redirect_uri: redirectUri, code_challenge: verifierPair().challenge, code_challenge_method: 'S256', state: 'a-state-long-enough', [field]: value };
      const start = new URL(`${base}/auth/login`);
      for (const [k, v] of Object.entries(query)) start.searchParams.set(k, v);
      const refused = await fetch(start, { dispatcher, redirect: 'manual' });
      expect(refused.status, field).toBe(400);
      expect(await refused.text()).toContain(complaint);
    }
  });

  it('a callback with a state this server never issued is a 400 page; a redirect that is not loopback is refused', async () => {
    const res = await fetch(`${base}/auth/callback?state=forged-state&code=forged`, { dispatcher });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('This sign-in is unknown or has expired');
    const start = new URL(`${base}/auth/login`);
    for (const [k, v] of Object.entries({ redirect_uri: 'https://evil.example/callback', code_challenge: verifierPair().challenge, code_challenge_method: 'S256', state: 'a-state-long-enough' })) start.searchParams.set(k, v);
    const refused = await fetch(start, { dispatcher, redirect: 'manual' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('redirect_uri must be a loopback address of this machine');
    // A loopback port with another path may be another program's: kubectl proxy forwards
    // /api/v1/.../proxy/... into the cluster, to whoever runs there (found by a review).
    const port = new URL(redirectUri).port;
    for (const other of [`http://127.0.0.1:${port}/api/v1/namespaces/x/services/http:grab:80/proxy/callback`, `http://127.0.0.1:${port}/callback?next=/elsewhere`, `http://localhost:${port}/`]) {
      start.searchParams.set('redirect_uri', other);
      const elsewhere = await fetch(start, { dispatcher, redirect: 'manual' });
      expect(elsewhere.status, other).toBe(400);
      expect(await elsewhere.text()).toContain('redirect_uri must be a loopback address of this machine with a port and the path /callback');
    }
  });
});
