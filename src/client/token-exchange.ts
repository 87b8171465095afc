/**
 * The client side of the token exchange (RFC 8693, docs/federated.md): a CI job's ID token posted
 * to the server's POST /auth/token, form-encoded as RFC 6749 asks, for a short-lived key. Used by
 * the GitHub Action's `auth: oidc`. node:https rather than fetch, so a private CA can be trusted.
 * Neither the job token nor the key ever appears in an error: a refusal names the server's
 * RFC 6749 error and its description only.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { plainHttpElsewhere } from './loopback.js';
import { authBase } from '../api/resources.js';
import { credentialParameter, subjectTokenTypes, tokenExchangeGrant } from '../api/token-exchange.js';

export interface JobTokenExchange {
  /** The management API URL (as the server input or --server names it). */
  server: string;
  /** The job's OpenID Connect ID token. */
  idToken: string;
  /** The FederatedCredential to use (federated_credential); without it exactly one rule must match. */
  credential?: string;
  /** PEM of a CA (or self-signed certificate) to trust for the server. */
  ca?: Buffer;
  userAgent?: string;
}

export interface ExchangedKey {
  key: string;
  expiresInSeconds: number;
}

/** Retries of a 429 that asks for a short wait: the server's bound on key-less bodies being received (docs/auth.md). */
const retries = 3;
const longestWaitSeconds = 5;

/** Trades the job token for a key; throws an Error saying why the server refused (never a token). */
export async function exchangeJobToken(opts: JobTokenExchange): Promise<ExchangedKey> {
  const target = new URL(`${authBase(opts.server)}/auth/token`);
  // The job's token is a credential for the exchange: in clear text to another machine, anyone on
  // the path could exchange it first (found by a review; login refuses the same).
  if (plainHttpElsewhere(target)) {
    throw new Error(`the server ${target.origin} is plain http on another machine: the job's token would cross the network in clear text; use the server's https address`);
  }
  const form = new URLSearchParams({ grant_type: tokenExchangeGrant, subject_token: opts.idToken, subject_token_type: subjectTokenTypes[0]! });
  if (opts.credential) form.set(credentialParameter, opts.credential);
  const payload = Buffer.from(form.toString());
  let answer = await post(target, payload, opts);
  // A 429 refused the body before reading it, so the job token was not spent: a fleet of jobs
  // behind one address starting together waits its turn rather than failing (a review measured the
  // bound refusing bursts whose bodies lagged their headers by 5 ms or more).
  for (let i = 0; i < retries && answer.status === 429 && answer.retryAfter !== undefined && answer.retryAfter <= longestWaitSeconds; i++) {
    // Up to a second more at random: jobs refused together do not all come back together.
    await new Promise((r) => setTimeout(r, answer.retryAfter! * 1000 + Math.random() * 1000));
    answer = await post(target, payload, opts);
  }
  const { status, text } = answer;
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's page): named by its status below.
  }
  if (status === 200 && typeof body.access_token === 'string' && body.access_token) {
    return { key: body.access_token, expiresInSeconds: typeof body.expires_in === 'number' ? body.expires_in : 0 };
  }
  // The server's own refusals before the exchange (413, the bound's 429) are kube Status bodies.
  const statusMessage = body.kind === 'Status' && typeof body.message === 'string' ? body.message : undefined;
  const error = typeof body.error === 'string' ? body.error : statusMessage !== undefined ? String(body.reason ?? 'Status') : 'no RFC 6749 error';
  const description = typeof body.error_description === 'string' ? `: ${body.error_description}` : statusMessage !== undefined ? `: ${statusMessage}` : '';
  throw new Error(`the server refused the token exchange at ${target.origin}/auth/token (${status} ${error}${description})`);
}

/** One POST of the form: the status, the body's text and a Retry-After in seconds, if any. */
function post(target: URL, payload: Buffer, opts: JobTokenExchange): Promise<{ status: number; text: string; retryAfter?: number }> {
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': payload.length, Accept: 'application/json', 'User-Agent': opts.userAgent ?? 'teamkeys' };
    const req = send(target, { method: 'POST', headers, ...(opts.ca ? { ca: opts.ca } : {}), timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      const wait = /^\d{1,4}$/.test(res.headers['retry-after'] ?? '') ? Number(res.headers['retry-after']) : undefined;
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), ...(wait !== undefined ? { retryAfter: wait } : {}) }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => reject(new Error(`the token exchange could not reach ${target.origin}: ${err.message}`)));
    req.end(payload);
  });
}
