/**
 * The token exchange's client (the GitHub Action's `auth: oidc`) waits out a 429 that asks for a
 * short wait: the server's bound on bodies sent without a key refuses a body before reading it, so
 * the job token is not spent, and a fleet of jobs behind one address starting together would
 * otherwise fail the ones past the bound (docs/auth.md).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchangeJobToken } from '../../src/client/token-exchange.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

describe('the token exchange client and a 429 before the body', () => {
  let s: InProcess;
  beforeAll(async () => {
    s = await startInProcess({ anonymousBodies: { perClient: 1, totalBytes: 4 * 1024 * 1024 } });
  });
  afterAll(async () => s?.close());

  /** A revocation from 127.0.0.1 whose body never comes: the address's one place, until the socket goes. */
  const holdPlace = () =>
    new Promise<Socket>((resolve) => {
      const socket = connect(Number(new URL(s.base).port), '127.0.0.1', () => {
        socket.write('POST /auth/revoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 40\r\n\r\ntoken=');
        setTimeout(() => resolve(socket), 100);
      });
      socket.on('error', () => {});
    });

  // Found by a review (stop 63): the job's token went over plain http to any host.
  it('refuses to send a job token over plain http to another machine, before any request', async () => {
    await expect(exchangeJobToken({ server: 'http://teamkeys.example:8080/kubernetes/management', idToken: 'not.a.token' })).rejects.toThrow(
      "the server http://teamkeys.example:8080 is plain http on another machine: the job's token would cross the network in clear text; use the server's https address",
    );
    await expect(exchangeJobToken({ server: 'http://[::1]:9/kubernetes/management', idToken: 'not.a.token' })).rejects.toThrow('the token exchange could not reach http://[::1]:9');
  });

  it('retries after Retry-After and reaches the exchange once the place is free', async () => {
    const held = await holdPlace();
    setTimeout(() => held.destroy(), 700);
    const started = Date.now();
    // Not a job token: the exchange itself refuses it, which shows the retry got through the bound.
    const refusal = await exchangeJobToken({ server: s.base, idToken: 'not.a.token' }).catch((err: Error) => err.message);
    expect(refusal).toMatch(/^the server refused the token exchange at http:\/\/127\.0\.0\.1:\d+\/auth\/token \((400|401) invalid_(request|grant)/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('gives up after three retries, saying the server refused with 429', async () => {
    const held = await holdPlace();
    try {
      const started = Date.now();
      const refusal = await exchangeJobToken({ server: s.base, idToken: 'not.a.token' }).catch((err: Error) => err.message);
      expect(refusal).toMatch(/\/auth\/token \(429 TooManyRequests: too many requests from this address are sending a body at once; try again\)$/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    } finally {
      held.destroy();
    }
  }, 15_000);
});
