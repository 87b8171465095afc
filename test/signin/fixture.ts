/**
 * The sign-in tests' world: a real OpenID provider process (provider.mjs, oidc-provider 8) on a
 * loopback HTTPS port with a throwaway certificate, and a small browser that follows redirects,
 * keeps cookies and posts the provider's forms (login, consent, device code).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bin } from '../support/cli.js';
import { Agent, fetch } from 'undici';
import { selfSignedCert } from '../support/serve-process.js';
import { eventually as pollUntil } from '../support/eventually.js';

const here = new URL('.', import.meta.url).pathname;

export interface ProviderUser {
  groups: string[];
  disabled?: boolean;
  name?: string;
  /** preferred_username, when not the account's id (another account claiming the same name). */
  username?: string;
}

export interface TestProvider {
  issuer: string;
  /** The provider's certificate (its own CA), for --oidc-ca-file. */
  caFile: string;
  clientSecretFile: string;
  setUser(id: string, user: ProviderUser): Promise<void>;
  /** Every request but the admin endpoint fails at the connection, until up(). */
  down(): Promise<void>;
  up(): Promise<void>;
  /** ID tokens re-signed by the provider with these claims changed (another audience or issuer); undefined stops it. */
  forge(claims: { aud?: string; iss?: string } | undefined): Promise<void>;
  /** Refresh tokens the provider issued so far (to look for them where they must not be). */
  refreshTokens(): Promise<string[]>;
  /** Userinfo answers 503 the next `times` requests (the token endpoint still answers). */
  failUserinfo(times: number): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

/** `rotateRefreshTokens`: each refresh returns a new refresh token and ends the one sent, as Dex does by default. */
export async function startProvider(opts: { rotateRefreshTokens?: boolean } = {}): Promise<TestProvider> {
  const { cert, key, dir } = selfSignedCert();
  const secret = 'provider-client-secret-for-tests';
  const clientSecretFile = join(dir, 'client-secret');
  writeFileSync(clientSecretFile, `${secret}\n`, { mode: 0o600 });
  const child: ChildProcess = spawn(process.execPath, [join(here, 'provider.mjs'), '0', cert, key, secret], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PROVIDER_ROTATE_REFRESH: opts.rotateRefreshTokens ? '1' : '' } });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the OpenID provider did not start:\n${output}`)), 20_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output += `${line}\n`;
      const m = line.match(/^issuer (\S+)$/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`the OpenID provider exited with ${code}:\n${output}`)));
  });
  const dispatcher = new Agent({ connect: { ca: readFileSync(cert) } });
  const adminCall = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${issuer}${path}`, { method, dispatcher, ...(body ? { body: JSON.stringify(body) } : {}) });
    if (res.status >= 300) throw new Error(`provider admin ${path}: ${res.status}`);
    return res.status === 200 ? res.json() : undefined;
  };
  return {
    issuer,
    caFile: cert,
    clientSecretFile,
    setUser: async (id, user) => void (await adminCall('PUT', `/admin/users/${encodeURIComponent(id)}`, user)),
    down: async () => void (await adminCall('POST', '/admin/down')),
    forge: async (claims) => void (await adminCall('POST', '/admin/forge', claims)),
    up: async () => void (await adminCall('POST', '/admin/up')),
    refreshTokens: async () => (await adminCall('GET', '/admin/refresh-tokens')) as string[],
    failUserinfo: async (times) => void (await adminCall('POST', '/admin/userinfo-fail', times)),
    output: () => output,
    stop: async () => {
      await dispatcher.close();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The flags of `teamkeys serve` that make it a relying party of `provider` (its groups scope asked for). */
export const oidcFlags = (provider: TestProvider): string[] => [
  '--oidc-issuer-url', provider.issuer,
  '--oidc-client-id', 'teamkeys',
  '--oidc-client-secret-file', provider.clientSecretFile,
  '--oidc-ca-file', provider.caFile,
  '--oidc-extra-scopes', 'groups',
];

/**
 * The username a provider account signs in as under the default --oidc-username-prefix (as
 * kube-apiserver: the issuer URL and `#` before the preferred_username claim), for Teams and keys
 * that name a signed-in person by user rather than by group.
 */
export const signedInName = (provider: TestProvider, username: string): string => `${provider.issuer}#${username}`;
/** A RegExp source matching `text` literally. */
export const literally = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** eventually (test/support/eventually.ts) with the sign-in tests' bound: each step of the identity refresh takes up to one interval. */
export const eventually = (what: string, check: () => boolean, timeoutMs = 20_000): Promise<true> =>
  pollUntil(what, () => check() || undefined, { timeoutMs, intervalMs: 300 });

/** The form of an HTML page: where it posts and its fields with their values. */
function formOf(html: string): { action: string; method: string; fields: Record<string, string> } | undefined {
  const form = html.match(/<form\b([^>]*)>([\s\S]*?)<\/form>/i);
  if (!form) return undefined;
  const attr = (tag: string, name: string) => tag.match(new RegExp(`\\b${name}="([^"]*)"`, 'i'))?.[1];
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<(?:input|button)\b([^>]*)>/gi)) {
    const name = attr(input[1]!, 'name');
    if (name) fields[name] = attr(input[1]!, 'value') ?? '';
  }
  return { action: attr(form[1]!, 'action') ?? '', method: (attr(form[1]!, 'method') ?? 'get').toLowerCase(), fields };
}

export interface Visit {
  status: number;
  url: string;
  body: string;
}

/** A person's browser: cookies, redirects, and the provider's forms filled in as `login`. */
export class Browser {
  /** Every URL it requested, in order (to show no key ever travels in one). */
  readonly urls: string[] = [];
  /** The cookies sent with each of those requests (the Cookie header), in the same order. */
  readonly sentCookies: string[] = [];
  private readonly cookies = new Map<string, string>();
  private readonly dispatcher: Agent;

  constructor(cas: Buffer[]) {
    this.dispatcher = new Agent({ connect: { ca: cas } });
  }

  /** Keeps a cookie a response outside signIn set (a sign-in the test started by hand). */
  setCookie(setCookieHeader: string): void {
    const [pair] = setCookieHeader.split(';');
    const eq = pair!.indexOf('=');
    this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }

  /** Opens `url` and goes on until a page without a form (the CLI's or the server's last page). */
  async signIn(url: string, login: string, extra: Record<string, string> = {}): Promise<Visit> {
    let next: { url: string; method: string; body?: string } = { url, method: 'GET' };
    for (let step = 0; step < 30; step++) {
      this.urls.push(next.url);
      const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      this.sentCookies.push(cookie);
      const res = await fetch(next.url, {
        method: next.method,
        redirect: 'manual',
        dispatcher: this.dispatcher,
        headers: { cookie, ...(next.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        ...(next.body ? { body: next.body } : {}),
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const eq = pair!.indexOf('=');
        this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        next = { url: new URL(location, next.url).toString(), method: 'GET' };
        continue;
      }
      const body = await res.text();
      const form = formOf(body);
      if (!form) return { status: res.status, url: next.url, body };
      const fields = { ...form.fields, login, password: 'any-password', ...extra };
      const action = new URL(form.action || next.url, next.url).toString();
      next = form.method === 'post' ? { url: action, method: 'POST', body: new URLSearchParams(fields).toString() } : { url: `${action}?${new URLSearchParams(fields)}`, method: 'GET' };
    }
    throw new Error('the sign-in did not finish in 30 steps');
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

/** A running `teamkeys ARGS`: the first line of `from` matching `wanted` (its match), then how it ended. */
export async function startCli(args: string[], env: Record<string, string>, wanted: RegExp, from: 'stdout' | 'stderr' = 'stdout'): Promise<{ match: RegExpMatchArray; done: Promise<{ code: number | null; stdout: string; stderr: string }> }> {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  const other = from === 'stdout' ? 'stderr' : 'stdout';
  child[other]!.on('data', (d: Buffer) => (out[other] += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', r));
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    createInterface({ input: child[from]! }).on('line', (line) => {
      out[from] += `${line}\n`;
      const m = line.match(wanted);
      if (m) resolve(m);
    });
    void exited.then((code) => reject(new Error(`teamkeys ${args[0]} exited with ${code} before printing ${wanted}:\n${out.stdout}${out.stderr}`)));
  });
  // The rest of `from` is read to its end before the exit is reported.
  const drained = new Promise((r) => child[from]!.on('end', r));
  return { match, done: Promise.all([exited, drained]).then(([code]) => ({ code, ...out })) };
}

/** `teamkeys login --no-browser ARGS`, with the person signing in as `user` in `browser`: its exit, output and last page. */
export async function teamkeysLogin(browser: Browser, user: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; page: Visit }> {
  const login = await startCli(['login', '--no-browser', ...args], env, /^https:\/\/\S+$/);
  const page = await browser.signIn(login.match[0], user);
  return { ...(await login.done), page };
}
