/**
 * The GitHub secret scanning endpoint charges a client's budget only after it has read the body and
 * failed to verify it, so requests sent at once all pass the budget check: one address with any two
 * header strings made the server buffer up to 3 MiB (the server-wide limit) per concurrent request
 * (found by a review). Now at most 2 alerts per client address are read at once (429 beyond), each at
 * most 1 MiB (413); per address, so that stalled requests of one address turn no other away (a cap
 * for the whole server let one address refuse GitHub's alerts, found by the next review).
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { startGitHubKeysServer, type GitHubKeysServer } from '../support/github-keys-server.js';
import { eventually } from '../support/eventually.js';

describe('unverified GitHub alerts sent at once', () => {
  let s: InProcess;
  let keyServer: Server;
  beforeAll(async () => {
    const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const published = JSON.stringify({ public_keys: [{ key_identifier: 'k1', key: github.publicKey.export({ type: 'spki', format: 'pem' }) }] });
    keyServer = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(published));
    await new Promise<void>((done) => keyServer.listen(0, '127.0.0.1', done));
    const { port } = keyServer.address() as AddressInfo;
    s = await startInProcess({ leakReports: { gitHubKeysUrl: `http://127.0.0.1:${port}/keys`, limit: { burst: 3, perSecond: 0.001 } } });
  });
  afterAll(async () => {
    await s?.close();
    await new Promise<void>((done) => keyServer?.close(() => done()));
  });

  /** One raw request: headers now, the body once `go` resolves; resolves to the status code. */
  const slowAlert = (go: Promise<void>, body: Buffer) =>
    new Promise<number>((resolve, reject) => {
      const { port } = new URL(s.base);
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /auth/secret-scanning/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nGithub-Public-Key-Identifier: k1\r\nGithub-Public-Key-Signature: AAAA\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        );
        void go.then(() => socket.write(body));
      });
      let answer = '';
      socket.on('data', (d: Buffer) => {
        answer += d.toString('latin1');
        const m = /^HTTP\/1\.1 (\d+)/.exec(answer);
        if (m) {
          resolve(Number(m[1]));
          socket.destroy();
        }
      });
      socket.on('error', reject);
    });

  // First: the next case spends the address's budget.
  it('a body over 1 MiB is refused (413) before it is read', async () => {
    const body = Buffer.from(`[${'"x",'.repeat(300_000)}"x"]`); // 1.5 MB
    expect(await slowAlert(Promise.resolve(), body)).toBe(413);
  });

  it("stalled requests of one address (headers sent, no body) turn no other address's alert away", async () => {
    const { port } = new URL(s.base);
    const held: Socket[] = [];
    for (let i = 0; i < 4; i++) {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(`POST /auth/secret-scanning/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nGithub-Public-Key-Identifier: k1\r\nGithub-Public-Key-Signature: AAAA\r\nContent-Length: 1000000\r\n\r\n`));
      socket.on('error', () => {});
      held.push(socket);
    }
    await new Promise((r) => setTimeout(r, 300));
    // Another sender (GitHub, say): its alert is read and judged (401 for this made-up signature).
    const res = await s.inject({ method: 'POST', url: '/auth/secret-scanning/github', remoteAddress: '2001:db8::7', headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': 'AAAA' }, payload: '[]' });
    expect(res.statusCode).toBe(401);
    for (const h of held) h.destroy();
  });

  it("a host's addresses share its network's places: a /64 holds 8 alerts being read (4 addresses' share), the next address of it is refused", async () => {
    const alert = (remoteAddress: string, payload: string | PassThrough) =>
      s.inject({ method: 'POST', url: '/auth/secret-scanning/github', remoteAddress, headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': 'AAAA' }, payload });
    // Eight addresses of one /64, one alert each, their bodies never finished: each address is
    // under its own bound of 2, the network at its 8.
    const bodies = Array.from({ length: 8 }, () => new PassThrough());
    const held = bodies.map((body, i) => alert(`2001:db8:5:6::${i + 1}`, body));
    await new Promise((r) => setTimeout(r, 300));
    const ninth = await alert('2001:db8:5:6::99', '[]');
    expect([ninth.statusCode, (ninth.json() as { message: string }).message]).toEqual([429, "too many secret scanning alerts from this address's network (2001:db8:5:6::/64) are being read at once; try again"]);
    // Another /64 (GitHub's, say) is read and judged (401 for this made-up signature).
    expect((await alert('2001:db8:7:8::1', '[]')).statusCode).toBe(401);
    for (const body of bodies) body.end('[]');
    expect((await Promise.all(held)).map((r) => r.statusCode)).toEqual(new Array(8).fill(401));
  });

  it('are bounded: at most two bodies of one address are read at once, the others answered 429 before theirs', async () => {
    const body = Buffer.from(`[${'"x",'.repeat(200_000)}"x"]`); // 1.0 MB, under the route's 1 MiB
    let go = () => {};
    const started = new Promise<void>((r) => (go = r));
    const answers = Array.from({ length: 24 }, () => slowAlert(started, body));
    await new Promise((r) => setTimeout(r, 300)); // every request's headers have passed onRequest
    go();
    const codes = await Promise.all(answers);
    const read = codes.filter((c) => c === 401).length; // 401: the body was read and its signature checked
    expect(read, JSON.stringify(codes)).toBeLessThanOrEqual(2);
    expect(codes.filter((c) => c === 429).length, JSON.stringify(codes)).toBe(24 - read);
  });
});

describe("GitHub's alert route, alerts sent whole and cut at once", () => {
  let s: InProcess;
  let keys: GitHubKeysServer;
  beforeAll(async () => {
    // GitHub's keys take 1.5 s: each alert's handler waits that long, holding its body.
    keys = await startGitHubKeysServer(1500);
    // Six unverified alerts per address, then 429: spent only by alerts whose handlers ran.
    s = await startInProcess({ leakReports: { gitHubKeysUrl: keys.url, limit: { burst: 6, perSecond: 0.001 } } });
  });
  afterAll(async () => {
    await s?.close();
    await keys?.close();
  });

  const body = `[${' '.repeat(500_000)}]`;
  const sendAndCut = () =>
    new Promise<void>((done) => {
      const socket = connect(Number(new URL(s.base).port), '127.0.0.1', () => {
        socket.write(`POST /auth/secret-scanning/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nGithub-Public-Key-Identifier: k1\r\nGithub-Public-Key-Signature: AAAA\r\nContent-Length: ${body.length}\r\n\r\n${body}`, () => {
          setTimeout(() => {
            socket.destroy();
            done();
          }, 30);
        });
      });
      socket.on('error', () => done());
    });

  it('hold their places until handled: of six half-MB alerts of one address, two are verified at once, four refused (found by a review: all six were)', async () => {
    for (let i = 0; i < 6; i++) await sendAndCut();
    await eventually('the two handlers have failed their verification', async () => {
      // The address's budget (6) is spent by two: its next alert is read and judged, not refused.
      const next = await s.inject({ method: 'POST', url: '/auth/secret-scanning/github', remoteAddress: '127.0.0.1', headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': 'AAAA' }, payload: '[]' });
      return next.statusCode === 401 ? next : undefined;
    });
    // The budget counts what the handlers refused: two of the six, and this one.
    const spent = [];
    for (let i = 0; i < 4; i++) spent.push((await s.inject({ method: 'POST', url: '/auth/secret-scanning/github', remoteAddress: '127.0.0.1', headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': 'AAAA' }, payload: '[]' })).statusCode);
    expect(spent).toEqual([401, 401, 401, 429]);
  }, 20_000);
});
