/**
 * Issue 33 path 8: sign-ins in progress hold no server memory. 10,001 anonymous /auth/login
 * requests (past the 10,000 entries the old in-memory map held) sent while a person is at the
 * provider's login page do not push that person's sign-in out: it finishes, and the CLI gets its key.
 * The started sign-in travels sealed in that browser's cookie (src/signin/sealed-start.ts); without
 * the cookie (another browser) the callback is refused.
 */
import { randomBytes } from 'node:crypto';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSignInWorld, type SignInWorld } from '../support/signin-world.js';
import { loopbackRedirect, pkcePair as pkce } from './cli-stand-in.js';
import { Browser } from './fixture.js';

let world: SignInWorld;
let cas: Buffer[];
let dispatcher: Agent;
let loopback: { redirectUri: string; close(): void };
let redirectUri: string;
let origin: string;

const loginUrl = (challenge: string) => {
  const url = new URL(`${origin}/auth/login`);
  for (const [k, v] of Object.entries({ redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state: randomBytes(16).toString('base64url') })) url.searchParams.set(k, v);
  return url.toString();
};
/** GET /auth/login as a browser would, without following: the provider's address and the cookie set. */
async function startByHand(challenge: string): Promise<{ location: string; setCookie: string }> {
  const res = await fetch(loginUrl(challenge), { dispatcher, redirect: 'manual' });
  await res.arrayBuffer();
  expect(res.status).toBe(302);
  return { location: res.headers.get('location')!, setCookie: res.headers.getSetCookie()[0] ?? '' };
}

describe('sign-ins in progress hold no server memory (issue 33 path 8)', () => {
  beforeAll(async () => {
    world = await startSignInWorld({ users: { bob: { groups: ['everyone'] } } });
    origin = new URL(world.served.url).origin;
    cas = world.cas;
    dispatcher = new Agent({ connect: { ca: cas }, connections: 16 });
    loopback = await loopbackRedirect();
    redirectUri = loopback.redirectUri;
  }, 60_000);

  afterAll(async () => {
    loopback?.close();
    await dispatcher?.close();
    await world?.stop();
  });

  it('a sign-in started before 10,001 anonymous /auth/login requests still finishes, and the CLI gets its key', async () => {
    const { verifier, challenge } = pkce();
    const started = await startByHand(challenge);
    let sent = 0;
    const flood = async () => {
      while (sent < 10_001) {
        sent++;
        const res = await fetch(loginUrl(pkce().challenge), { dispatcher, redirect: 'manual' });
        await res.arrayBuffer();
        expect(res.status).toBe(302);
      }
    };
    await Promise.all(Array.from({ length: 16 }, flood));
    const browser = new Browser(cas);
    browser.setCookie(started.setCookie);
    await browser.signIn(started.location, 'bob').finally(() => browser.close());
    // The browser ends at the CLI's loopback address (not at a server page saying the sign-in is unknown).
    expect(browser.urls.at(-1)!.startsWith(redirectUri), browser.urls.at(-1)).toBe(true);
    const received = new URL(browser.urls.at(-1)!);
    const code = received.searchParams.get('code');
    expect(code, received.searchParams.get('error_description') ?? '').toBeTruthy();
    const res = await fetch(`${origin}/auth/token`, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code, code_verifier: verifier, redirect_uri: redirectUri }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { key?: string }).key).toMatch(/^tk_[0-9A-Za-z]{49}$/);
  }, 120_000);

  it('the sign-in travels sealed in a short-lived cookie of the browser; the callback in another browser is refused as unknown', async () => {
    const started = await startByHand(pkce().challenge);
    expect(started.setCookie).toMatch(/^teamkeys-signin-[\w-]{16}=aesgcm:v1:.*; Path=\/auth; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    const browser = new Browser(cas);
    const page = await browser.signIn(started.location, 'bob').finally(() => browser.close());
    expect(page.status).toBe(400);
    expect(page.body).toContain('This sign-in is unknown or has expired');
  }, 60_000);
});
