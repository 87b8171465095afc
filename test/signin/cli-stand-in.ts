/**
 * The CLI's side of a browser sign-in, played over HTTP by a test (as test/signin/refusals.test.ts
 * does by hand): a loopback listener for the redirect, a PKCE pair, the provider's forms filled in
 * by a fresh Browser, then the exchange of the one-time code for the Login key.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Agent, fetch } from 'undici';
import { Browser } from './fixture.js';

export interface Exchanged {
  status: number;
  body: { message?: string; key?: string; name?: string; user?: string };
}

export interface CliStandIn {
  /** Signs the provider account `login` in and exchanges its code: the server's answer. */
  signIn(login: string, replaces?: string): Promise<Exchanged>;
  close(): Promise<void>;
}

/** A PKCE verifier and its S256 challenge, as the CLI makes them. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The CLI's loopback listener, where the server sends the browser back: it answers any request with a small page. */
export async function loopbackRedirect(): Promise<{ redirectUri: string; close(): void }> {
  const loopback: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>received</p>'));
  await new Promise<void>((r) => loopback.listen(0, '127.0.0.1', r));
  return { redirectUri: `http://127.0.0.1:${(loopback.address() as { port: number }).port}/callback`, close: () => loopback.close() };
}

export async function cliStandIn(serverOrigin: string, cas: Buffer[]): Promise<CliStandIn> {
  const dispatcher = new Agent({ connect: { ca: cas } });
  const loopback = await loopbackRedirect();
  const { redirectUri } = loopback;
  return {
    async signIn(login, replaces) {
      const { verifier, challenge } = pkcePair();
      const start = new URL(`${serverOrigin}/auth/login`);
      for (const [k, v] of Object.entries({ redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state: randomBytes(16).toString('base64url') })) start.searchParams.set(k, v);
      const browser = new Browser(cas);
      await browser.signIn(start.toString(), login).finally(() => browser.close());
      const received = new URL(browser.urls[browser.urls.length - 1]!);
      const code = received.searchParams.get('code');
      if (!code) return { status: 0, body: { message: received.searchParams.get('error_description') ?? 'no code' } };
      const res = await fetch(`${serverOrigin}/auth/token`, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code, code_verifier: verifier, redirect_uri: redirectUri, ...(replaces ? { replaces } : {}) }),
      });
      return { status: res.status, body: (await res.json()) as Exchanged['body'] };
    },
    close: async () => {
      loopback.close();
      await dispatcher.close();
    },
  };
}

/** What the API answers, as far as these tests read it. */
export type Answer = { status: number; body: Record<string, unknown> & { message?: string } };

/**
 * Calls the server at `serverUrl` with `key`: a path under `resources` (/teams) or a whole one
 * (/apis/<group>/...); status and JSON body.
 */
export function apiCaller(serverUrl: string, resources: string, cas: Buffer[]) {
  const dispatcher = new Agent({ connect: { ca: cas } });
  const call = async (key: string, method: string, path: string, body?: unknown, type = 'application/json'): Promise<Answer> => {
    const res = await fetch(`${serverUrl}${path.startsWith('/apis/') ? path : `${resources}${path}`}`, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': type } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Answer['body'] };
  };
  return Object.assign(call, { close: () => dispatcher.close() });
}
