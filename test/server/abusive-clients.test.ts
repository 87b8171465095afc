/**
 * Slow and abusive clients against a real `teamkeys serve`: wrong keys by the thousand from one
 * address, headers and bodies dribbled in, a body over the limit. Each gets a Status answer, and
 * the server keeps serving everyone else. Other loopback addresses (127.0.0.2, .3) stand in for
 * other machines.
 */
import { randomBytes } from 'node:crypto';
import { request, Agent } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from './serve-process.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(url: string, opts: { method?: string; token?: string; from?: string; agent?: Agent; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: opts.method ?? 'GET',
        ...(opts.agent ? { agent: opts.agent } : { localAddress: opts.from ?? '127.0.0.1' }),
        headers: { ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}), ...(opts.body ? { 'Content-Type': 'application/json' } : {}) },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Writes raw bytes on a socket, a piece at a time, and returns what came back before it closed. */
function dribble(port: number, head: string, piece: string, everyMs: number, limitMs: number): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the slow connection open for ${limitMs} ms`));
    }, limitMs);
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => socket.writable && socket.write(piece), everyMs);
    });
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ answer, closedAfterMs: Date.now() - started });
    });
  });
}

const statusOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { kind: string; code: number; reason: string; message: string };

describe('slow and abusive clients', () => {
  let served: Served;
  let port: number;
  let teams: string;

  beforeAll(async () => {
    served = await startServe(['--insecure-http', '--request-timeout', '2', '--auth-failure-limit', '20/0.25']);
    port = Number(new URL(served.url).port);
    teams = `${served.url}/apis/management.service/v1/teams`;
  });
  afterAll(async () => {
    await served.stop();
  });

  it('answers thousands of wrong keys from one address with 429 and Retry-After, and lets valid keys through', async () => {
    // The administrator's key has been used from the abusive address before: it stays known-good there.
    expect((await send(teams, { token: served.adminKey, from: '127.0.0.2' })).status).toBe(200);
    const created = await send(`${served.url}/apis/management.service/v1/ownedaccesskeys`, {
      method: 'POST',
      token: served.adminKey,
      body: JSON.stringify({ metadata: { name: 'fresh' }, spec: { user: 'someone' } }),
    });
    expect(created.status).toBe(201);
    const freshKey = (JSON.parse(created.body) as { spec: { key: string } }).spec.key;

    const agent = new Agent({ keepAlive: true, maxSockets: 16, localAddress: '127.0.0.2' });
    const tried: string[] = [];
    const counts = new Map<number, number>();
    const started = Date.now();
    const attempts = 2000;
    let next = 0;
    let badRetryAfter = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < attempts) {
          next++;
          const token = randomBytes(24).toString('hex');
          tried.push(token);
          const a = await send(teams, { token, agent });
          counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
          if (a.status === 429) {
            const status = JSON.parse(a.body) as { reason: string; code: number; message: string; details: { retryAfterSeconds: number } };
            if (!(Number(a.headers['retry-after']) >= 1 && status.reason === 'TooManyRequests' && status.details.retryAfterSeconds === Number(a.headers['retry-after']))) badRetryAfter++;
          }
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    agent.destroy();
    // A key never seen at the abusive address waits like the guesses do.
    const blocked = await send(teams, { token: freshKey, from: '127.0.0.2' });
    expect(blocked.status).toBe(429);
    expect([...counts.keys()].sort()).toEqual([401, 429]);
    // The budget: 20 at once, then one every 4 seconds.
    expect(counts.get(401)!).toBeLessThanOrEqual(20 + Math.ceil(seconds / 4) + 1);
    expect(counts.get(429)!).toBeGreaterThan(attempts - 20 - Math.ceil(seconds / 4) - 2);
    expect(badRetryAfter).toBe(0);

    // Everyone else is served as before, and at the abusive address a key known to work still works.
    expect((await send(teams, { token: served.adminKey })).status).toBe(200);
    expect((await send(teams, { token: freshKey, from: '127.0.0.3' })).status).toBe(200);
    expect((await send(teams, { token: served.adminKey, from: '127.0.0.2' })).status).toBe(200);
    // After the delay it asked for, the address may try again (and is told the key is wrong).
    await new Promise((r) => setTimeout(r, Number(blocked.headers['retry-after']) * 1000 + 100));
    expect((await send(teams, { token: randomBytes(24).toString('hex'), from: '127.0.0.2' })).status).toBe(401);
    // None of the guesses reached the log.
    const log = served.stderr();
    expect(tried.filter((t) => log.includes(t))).toEqual([]);
  }, 60_000);

  it('closes a connection whose headers arrive too slowly, with a 408 Status, and keeps serving', async () => {
    const slow = dribble(port, 'GET /kubernetes/management/apis HTTP/1.1\r\nHost: localhost\r\n', 'X-Slow: y\r\n', 300, 8_000);
    // Meanwhile a normal client is served at once.
    expect((await send(teams, { token: served.adminKey })).status).toBe(200);
    const { answer, closedAfterMs } = await slow;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(statusOf(answer)).toMatchObject({ kind: 'Status', code: 408, reason: 'Timeout' });
    expect(closedAfterMs).toBeGreaterThanOrEqual(1900);
  }, 15_000);

  it('closes a connection whose body arrives too slowly, with a 408 Status', async () => {
    const head =
      `POST /kubernetes/management/apis/management.service/v1/teams HTTP/1.1\r\nHost: localhost\r\n` +
      `Authorization: Bearer ${served.adminKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunk = ' '.repeat(1024);
    const { answer, closedAfterMs } = await dribble(port, `${head}1\r\n{\r\n`, `${chunk.length.toString(16)}\r\n${chunk}\r\n`, 200, 8_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(statusOf(answer)).toMatchObject({ kind: 'Status', code: 408, reason: 'Timeout' });
    expect(closedAfterMs).toBeGreaterThanOrEqual(1900);
    expect((await send(teams, { token: served.adminKey })).status).toBe(200);
  }, 15_000);

  it('refuses a body declared larger than the limit at once, before reading it', async () => {
    const head =
      `POST /kubernetes/management/apis/management.service/v1/teams HTTP/1.1\r\nHost: localhost\r\n` +
      `Authorization: Bearer ${served.adminKey}\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`;
    const { answer, closedAfterMs } = await dribble(port, head, 'x'.repeat(1024), 200, 8_000);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(statusOf(answer)).toMatchObject({ kind: 'Status', code: 413, reason: 'RequestEntityTooLarge' });
    expect(closedAfterMs).toBeLessThan(1900);
    expect((await send(teams, { token: served.adminKey })).status).toBe(200);
  }, 15_000);
});
