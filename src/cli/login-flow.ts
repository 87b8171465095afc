/**
 * `teamkeys login`, as a native app signs in (RFC 8252): a loopback listener on a random port, the
 * browser sent to the server's /auth/login with a PKCE challenge and state, and the one-time code
 * that comes back exchanged, with the verifier, for the key in a POST body. With --device, the
 * provider's device grant instead: a code to approve in any browser, then the same POST.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { apiRoot } from '../api/resources.js';
import { connectionFailure } from '../client/connection-errors.js';
import { CliError } from './errors.js';
import { plainHttpElsewhere } from '../client/loopback.js';
import { authBase, readLogin, writeLogin, type CachedLogin } from './login-cache.js';

export interface LoginOptions {
  server: string;
  caFile?: string;
  /** Print the address instead of opening a browser. */
  noBrowser?: boolean;
  /** The provider's device authorization grant. */
  device?: boolean;
  /** Where the person is told what to do. */
  out: NodeJS.WritableStream;
  /** How long to wait for the person (default 10 minutes). */
  timeoutMs?: number;
}

/** What the server's /auth/token and /auth/device/token return once signed in. */
interface Minted {
  name: string;
  key: string;
  user: string;
  expirationTimestamp: string;
  ttlSeconds: number;
}

const base64url = (b: Buffer) => b.toString('base64url');

/** POSTs JSON to the server; the answer's JSON, or a CliError with the server's message. */
export async function postJson<T>(url: string, body: unknown, ca: Buffer | undefined): Promise<T> {
  const payload = Buffer.from(JSON.stringify(body));
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<T>((resolve, reject) => {
    const req = send(target, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': payload.length, 'User-Agent': 'teamkeys/login' }, ...(ca ? { ca } : {}), timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: { message?: string } | undefined;
        try {
          parsed = JSON.parse(text) as { message?: string };
        } catch {
          parsed = undefined;
        }
        if (res.statusCode === 200 && parsed) resolve(parsed as T);
        else reject(new CliError(`the server refused the sign-in (${res.statusCode}): ${parsed?.message ?? text.slice(0, 200)}`));
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => reject(new CliError(`cannot reach ${target.origin}: ${err.message}`)));
    req.end(payload);
  });
}

const page = (title: string, message: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)}</p></body></html>\n`;

function openBrowser(url: string): void {
  const [cmd, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  const child = spawn(cmd, args as string[], { stdio: 'ignore', detached: true });
  child.on('error', () => {});
  child.unref();
}

/** The browser flow: resolves with the minted key once the CLI's loopback address got its code. */
async function browserFlow(opts: LoginOptions, ca: Buffer | undefined, replaces: string | undefined): Promise<Minted> {
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash('sha256').update(verifier).digest());
  const state = base64url(randomBytes(24));
  const auth = authBase(opts.server);
  let finish!: (outcome: Minted | Error) => void;
  const done = new Promise<Minted | Error>((resolve) => (finish = resolve));
  let redirectUri = '';
  const answer = (res: ServerResponse, status: number, title: string, message: string) => res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(page(title, message));
  const listener = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return answer(res, 404, 'Not found', 'This address only receives the sign-in.');
    if (url.searchParams.get('state') !== state) return answer(res, 400, 'Cannot sign in', 'The sign-in answer does not belong to this teamkeys login (state does not match).');
    const error = url.searchParams.get('error');
    if (error) {
      const message = url.searchParams.get('error_description') ?? error;
      answer(res, 403, 'Sign-in refused', message);
      return finish(new CliError(`sign-in refused: ${message}`));
    }
    postJson<Minted>(`${auth}/auth/token`, { code: url.searchParams.get('code'), code_verifier: verifier, redirect_uri: redirectUri, ...(replaces ? { replaces } : {}) }, ca).then(
      (minted) => {
        answer(res, 200, 'Signed in', `Signed in to teamkeys as ${minted.user}. You may close this window.`);
        finish(minted);
      },
      (err: Error) => {
        answer(res, 400, 'Cannot sign in', err.message);
        finish(err);
      },
    );
  });
  await new Promise<void>((resolve, reject) => listener.once('error', reject).listen(0, '127.0.0.1', resolve));
  try {
    const port = (listener.address() as { port: number }).port;
    redirectUri = `http://127.0.0.1:${port}/callback`;
    const start = new URL(`${auth}/auth/login`);
    for (const [k, v] of Object.entries({ redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state })) start.searchParams.set(k, v);
    if (opts.noBrowser) opts.out.write(`Open this address in a browser to sign in:\n${start.toString()}\n`);
    else {
      opts.out.write(`Opening a browser to sign in. If none opens, open this address:\n${start.toString()}\n`);
      openBrowser(start.toString());
    }
    const timeoutMs = opts.timeoutMs ?? 10 * 60_000;
    const timer = setTimeout(() => finish(new CliError(`no sign-in within ${Math.round(timeoutMs / 60_000)} minutes; run teamkeys login again`)), timeoutMs);
    const outcome = await done;
    clearTimeout(timer);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  } finally {
    listener.closeAllConnections();
    listener.close();
  }
}

/** The device flow: the person approves a code in any browser; the CLI polls the server meanwhile. */
async function deviceFlow(opts: LoginOptions, ca: Buffer | undefined, replaces: string | undefined): Promise<Minted> {
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash('sha256').update(verifier).digest());
  const auth = authBase(opts.server);
  const started = await postJson<{ session: string; user_code: string; verification_uri: string; verification_uri_complete?: string; expires_in: number; interval: number }>(`${auth}/auth/device`, { code_challenge: challenge }, ca);
  opts.out.write(`To sign in, open ${started.verification_uri} and enter the code ${started.user_code}\n`);
  if (started.verification_uri_complete) opts.out.write(`(or open ${started.verification_uri_complete})\n`);
  const until = Date.now() + Math.min(started.expires_in * 1000, opts.timeoutMs ?? Infinity);
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, Math.max(1, started.interval) * 1000));
    const polled = await postJson<{ status: 'pending' } | ({ status: 'done' } & Minted)>(`${auth}/auth/device/token`, { session: started.session, code_verifier: verifier, ...(replaces ? { replaces } : {}) }, ca);
    if (polled.status === 'done') return polled;
  }
  throw new CliError('the device code expired before it was approved; run teamkeys login --device again');
}

/**
 * Fails unless the server answers over HTTP(S) with this CA (any status will do): checked before
 * anyone is sent to the provider, whose sign-in would otherwise end in "cannot reach" after consent.
 */
export async function checkReachable(server: string, ca: Buffer | undefined): Promise<void> {
  const target = new URL(apiRoot(server));
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  await new Promise<void>((resolve, reject) => {
    const req = send(target, { method: 'GET', headers: { 'User-Agent': 'teamkeys/login' }, ...(ca ? { ca } : {}), timeout: 30_000 }, (res) => {
      res.resume();
      resolve();
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer within 30 s'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => reject(new CliError(connectionFailure(err, target, ca !== undefined).message)));
    req.end();
  });
}

/** Signs in to the server and caches the key; returns the cached login. */
/**
 * A Login key travels in the answer to the sign-in and in every request made with it: over plain
 * HTTP only to this machine (a server run with --insecure-http for a test). Elsewhere it would cross
 * the network in clear text (found by a review), and kubectl sends no credential over HTTP anyway.
 */
function assertSafeTransport(server: string): void {
  if (plainHttpElsewhere(new URL(server))) {
    throw new CliError(`--server ${server}: a sign-in over plain http to another machine would send its key in clear text; use the server's https address`);
  }
}

export async function login(opts: LoginOptions): Promise<CachedLogin> {
  assertSafeTransport(opts.server);
  const ca = opts.caFile ? readFileSync(opts.caFile) : undefined;
  await checkReachable(opts.server, ca);
  // Logging in again replaces this CLI's previous Login key on the server.
  const replaces = readLogin(opts.server)?.name;
  const minted = opts.device ? await deviceFlow(opts, ca, replaces) : await browserFlow(opts, ca, replaces);
  const cached: CachedLogin = { server: apiRoot(opts.server), name: minted.name, key: minted.key, user: minted.user, ttlSeconds: minted.ttlSeconds, expirationTimestamp: minted.expirationTimestamp };
  writeLogin(cached);
  opts.out.write(`Signed in to ${cached.server} as ${minted.user} (access key ${minted.name}).\n`);
  return cached;
}
