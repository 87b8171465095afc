/**
 * Bodies sent without a key (the gate's anonymous paths) are bounded per client address and for
 * the whole server (src/server/auth/anonymous-bodies.ts): each route bounded one body, nothing
 * bounded how many were read at once, so clients without a key could make the server hold a
 * route's limit per connection they opened.
 */
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { bodyBound } from '../../src/server/auth/anonymous-bodies.js';
import { startGitHubKeysServer } from '../support/github-keys-server.js';

/** A revocation form of exactly `size` bytes (any string is a well-formed report: 200 `{}`). */
const form = (size: number) => `token=${'x'.repeat(Math.max(1, size - 6))}`;

describe('bodies sent without a key', () => {
  describe('per client address', () => {
    let s: InProcess;
    beforeAll(async () => {
      s = await startInProcess({ anonymousBodies: { perClient: 3, totalBytes: 1024 * 1024 }, leakReports: { limit: { burst: 1000, perSecond: 1000 } } });
    });
    afterAll(async () => s?.close());

    /** POST /auth/revoke from `remoteAddress`, its body `size` bytes, sent when `body` is ended. */
    const revoke = (remoteAddress: string, size: number, body: PassThrough | string = form(size)) =>
      s.inject({ method: 'POST', url: '/auth/revoke', remoteAddress, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(size) }, payload: body });

    it('an address sending three bodies at once is refused a fourth (429, Retry-After: 1) before its body is read; other addresses are served; the places come back', async () => {
      const bodies = [new PassThrough(), new PassThrough(), new PassThrough()];
      const held = bodies.map((b) => revoke('203.0.113.5', 40, b));
      await new Promise((r) => setTimeout(r, 200));
      const fourth = await revoke('203.0.113.5', 40);
      expect([fourth.statusCode, fourth.headers['retry-after'], (fourth.json() as { reason: string; message: string }).reason, (fourth.json() as { message: string }).message]).toEqual([
        429,
        '1',
        'TooManyRequests',
        'too many requests from this address are sending a body at once; try again',
      ]);
      expect((await revoke('203.0.113.6', 40)).statusCode).toBe(200);
      for (const b of bodies) b.end(form(40));
      expect((await Promise.all(held)).map((r) => [r.statusCode, r.body])).toEqual(new Array(3).fill([200, '{}\n']));
      // Answered: the address's places are free again.
      expect((await Promise.all([1, 2, 3].map(() => revoke('203.0.113.5', 40)))).map((r) => r.statusCode)).toEqual([200, 200, 200]);
    });

    it("an IPv6 host's addresses share its /64's places (4 addresses' share): the next address of it is refused, another /64 is served", async () => {
      const bodies = Array.from({ length: 12 }, () => new PassThrough());
      // Four addresses of one /64, three bodies each: every address at its bound, the /64 at 12.
      const held = bodies.map((b, i) => revoke(`2001:db8:5:6::${Math.floor(i / 3) + 1}`, 40, b));
      await new Promise((r) => setTimeout(r, 200));
      const next = await revoke('2001:db8:5:6::99', 40);
      expect([next.statusCode, (next.json() as { message: string }).message]).toEqual([429, "too many requests from this address's network (2001:db8:5:6::/64) are sending a body at once; try again"]);
      expect((await revoke('2001:db8:7:8::1', 40)).statusCode).toBe(200);
      for (const b of bodies) b.end(form(40));
      expect((await Promise.all(held)).map((r) => r.statusCode)).toEqual(new Array(12).fill(200));
    });

    it('a request without a body takes no place (health, a sign-in GET), and neither does one with a key', async () => {
      const bodies = [new PassThrough(), new PassThrough(), new PassThrough()];
      const held = bodies.map((b) => revoke('203.0.113.7', 40, b));
      await new Promise((r) => setTimeout(r, 200));
      expect((await s.inject({ method: 'GET', url: '/healthz', remoteAddress: '203.0.113.7' })).statusCode).toBe(200);
      // A GET's body is never read, whatever length it claims.
      expect((await s.inject({ method: 'GET', url: '/healthz', remoteAddress: '203.0.113.7', headers: { 'content-length': '3' }, payload: 'abc' })).statusCode).toBe(200);
      const made = await s.inject({
        method: 'POST',
        url: '/kubernetes/management/apis/management.service/v1/teams',
        remoteAddress: '203.0.113.7',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ metadata: { name: 'keyed-body' }, spec: { displayName: 'Keyed' } }),
      });
      expect(made.statusCode, made.body).toBe(201);
      for (const b of bodies) b.end(form(40));
      await Promise.all(held);
    });

    it('a body that never arrives, its connection cut, gives its place back', async () => {
      // Loopback sockets: the address is 127.0.0.1. Three requests send their headers and part of a body, then are cut.
      const { port } = new URL(s.base);
      const sockets = await Promise.all(
        [1, 2, 3].map(
          () =>
            new Promise<ReturnType<typeof connect>>((resolve) => {
              const socket = connect(Number(port), '127.0.0.1', () => {
                socket.write('POST /auth/revoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 40\r\n\r\ntoken=');
                resolve(socket);
              });
              socket.on('error', () => {});
            }),
        ),
      );
      await new Promise((r) => setTimeout(r, 200));
      const refused = await fetch(`${s.base}/auth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form(40) });
      expect(refused.status).toBe(429);
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => setTimeout(r, 200));
      const served = await fetch(`${s.base}/auth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form(40) });
      expect(served.status).toBe(200);
    });
  });

  describe('for the whole server', () => {
    let s: InProcess;
    const total = 64 * 1024 + 100;
    beforeAll(async () => {
      s = await startInProcess({ anonymousBodies: { perClient: 100, totalBytes: total }, leakReports: { limit: { burst: 1000, perSecond: 1000 } } });
    });
    afterAll(async () => s?.close());

    const revoke = (remoteAddress: string, headers: Record<string, string>, body: PassThrough | string) =>
      s.inject({ method: 'POST', url: '/auth/revoke', remoteAddress, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: body });

    const refusal = 'the server is receiving as many request bodies from clients without a key as it allows at once; try again';

    it('bodies are counted as they arrive: one whose declared length would not fit is refused before it is read, one that crosses the bound while arriving is cut; both 429', async () => {
      const first = new PassThrough();
      // Declared 64 KiB - 1 (under the route's limit); 60 KiB of it sent and held.
      const held = revoke('198.51.100.1', { 'content-length': String(64 * 1024 - 1) }, first);
      first.write(form(64 * 1024 - 1).slice(0, 60 * 1024));
      await new Promise((r) => setTimeout(r, 200));
      const declared = await revoke('198.51.100.2', { 'content-length': String(total - 60 * 1024 + 1) }, form(total - 60 * 1024 + 1));
      expect([declared.statusCode, declared.headers['retry-after'], (declared.json() as { message: string }).message]).toEqual([429, '1', refusal]);
      // One that fits in what is left is read.
      expect((await revoke('198.51.100.3', { 'content-length': String(total - 60 * 1024) }, form(total - 60 * 1024))).statusCode).toBe(200);
      // Chunked: admitted with room left, cut when a chunk crosses the bound.
      const chunked = new PassThrough();
      const crossing = revoke('198.51.100.4', { 'transfer-encoding': 'chunked' }, chunked);
      chunked.write(`token=${'y'.repeat(20 * 1024)}`);
      await new Promise((r) => setTimeout(r, 100));
      chunked.end('y'.repeat(20 * 1024));
      const cut = await crossing;
      expect([cut.statusCode, (cut.json() as { message: string }).message]).toEqual([429, refusal]);
      first.end(form(64 * 1024 - 1).slice(60 * 1024));
      expect((await held).statusCode).toBe(200);
      expect((await revoke('198.51.100.2', { 'content-length': String(total - 60 * 1024 + 1) }, form(total - 60 * 1024 + 1))).statusCode).toBe(200);
    });

    it('a body held open after one byte counts one byte, whatever length it declared or may reach', async () => {
      const first = new PassThrough();
      const held = revoke('198.51.100.5', { 'transfer-encoding': 'chunked' }, first);
      first.write('t');
      await new Promise((r) => setTimeout(r, 200));
      expect((await revoke('198.51.100.6', { 'content-length': String(64 * 1024) }, form(64 * 1024))).statusCode).toBe(200);
      first.end('oken=abc');
      expect((await held).statusCode).toBe(200);
    });

    it('whatever mix of bodies is sent, answered or refused, every place comes back (generated)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ address: fc.constantFrom('192.0.2.1', '192.0.2.2', '2001:db8:1:2::1', '2001:db8:1:2::2'), size: fc.integer({ min: 7, max: 70_000 }), chunked: fc.boolean() }), { minLength: 1, maxLength: 8 }),
          async (requests) => {
            const bodies = requests.map(() => new PassThrough());
            const answers = requests.map((r, i) => revoke(r.address, r.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(r.size) }, bodies[i]!));
            await new Promise((r) => setTimeout(r, 20));
            requests.forEach((r, i) => bodies[i]!.end(form(r.size)));
            const codes = (await Promise.all(answers)).map((a) => a.statusCode);
            // Over the route's 64 KiB: 413; beyond the bound: 429; the rest read and answered.
            for (const c of codes) expect([200, 413, 429]).toContain(c);
            // Every place is back: a body of the whole bound (less one route limit) is read.
            const full = await revoke('192.0.2.99', { 'content-length': String(64 * 1024) }, form(64 * 1024));
            expect(full.statusCode).toBe(200);
          },
        ),
        { numRuns: 25, seed: 20261130 },
      );
    });
  });

  it("a body that has arrived holds no place while its request is answered: a second sender is read while the first's handler waits", async () => {
    // GitHub's alerts: the handler waits for GitHub's published keys, which this key server answers after 1.5 s.
    const keys = await startGitHubKeysServer(1500);
    // Room for one 600-byte body at a time.
    const s = await startInProcess({ anonymousBodies: { perClient: 8, totalBytes: 1000 }, leakReports: { gitHubKeysUrl: keys.url } });
    try {
      const alert = (remoteAddress: string) =>
        s.inject({ method: 'POST', url: '/auth/secret-scanning/github', remoteAddress, headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': 'AAAA' }, payload: `[${' '.repeat(598)}]` });
      // Timed from before the first: the key server's 1.5 s wait is then all inside the measure,
      // however long this worker is held up around the pause below.
      const started = Date.now();
      const first = alert('192.0.2.10');
      await new Promise((r) => setTimeout(r, 300));
      // The second's own answer time: answered only after the key server's wait, it was read and
      // judged while the first's handler waited (a refusal would come back at once).
      const second = alert('192.0.2.11').then((r) => ({ r, at: Date.now() - started }));
      // Both bodies are read and their signatures judged (401 for this made-up one), the second not refused while the first waits.
      const [a, b] = await Promise.all([first, second]);
      expect([a.statusCode, b.r.statusCode]).toEqual([401, 401]);
      expect(b.at).toBeGreaterThan(1400);
    } finally {
      await s.close();
      await keys.close();
    }
  });

  it("webhook bodies (GitHub's alerts, the sidecar's) have a bound of their own: holding it full turns away no revocation or token exchange; both show on /metrics", async () => {
    const keys = await startGitHubKeysServer();
    const s = await startInProcess({ anonymousBodies: { perClient: 8, totalBytes: 2 * 1024 * 1024 }, leakReports: { gitHubKeysUrl: keys.url, limit: { burst: 1000, perSecond: 1000 } } });
    try {
      const alert = (remoteAddress: string, headers: Record<string, string>, body: PassThrough | string) =>
        s.inject({ method: 'POST', url: '/auth/secret-scanning/github', remoteAddress, headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': 'AAAA', ...headers }, payload: body });
      // Two chunked alerts from two addresses, a million bytes sent each and held.
      const bodies = [new PassThrough(), new PassThrough()];
      const held = bodies.map((b, i) => alert(`198.18.0.${i + 1}`, { 'transfer-encoding': 'chunked' }, b));
      for (const b of bodies) b.write(`[${' '.repeat(999_999)}`);
      await new Promise((r) => setTimeout(r, 300));
      const third = await alert('198.18.0.3', { 'content-length': '100000' }, `[${' '.repeat(99_998)}]`);
      expect([third.statusCode, (third.json() as { message: string }).message]).toEqual([429, 'the server is receiving as many request bodies from clients without a key as it allows at once; try again']);
      const revoke = await s.inject({ method: 'POST', url: '/auth/revoke', remoteAddress: '203.0.113.77', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form(60) });
      expect(revoke.statusCode).toBe(200);
      const metrics = await (await s.fetch(`${s.base}/metrics`)).text();
      expect(metrics).toMatch(/^teamkeys_anonymous_body_bytes\{pool="webhooks"\} 2000000$/m);
      expect(metrics).toMatch(/^teamkeys_anonymous_body_bytes\{pool="forms"\} 0$/m);
      expect(metrics).toMatch(/^teamkeys_anonymous_bodies_refused_total\{bound="webhooks"\} 1$/m);
      for (const b of bodies) b.end(']');
      expect((await Promise.all(held)).map((r) => r.statusCode)).toEqual([401, 401]);
      expect(await (await s.fetch(`${s.base}/metrics`)).text()).toMatch(/^teamkeys_anonymous_body_bytes\{pool="webhooks"\} 0$/m);
    } finally {
      await s.close();
      await keys.close();
    }
  });

  it("one-byte alerts held open from an IPv6 /62 (32, at the address and network bounds) do not turn GitHub's alerts away (default bounds)", async () => {
    const keys = await startGitHubKeysServer();
    const s = await startInProcess({ leakReports: { gitHubKeysUrl: keys.url, limit: { burst: 1000, perSecond: 1000 } } });
    try {
      const alert = (remoteAddress: string, headers: Record<string, string>, body: PassThrough | string) =>
        s.inject({ method: 'POST', url: '/auth/secret-scanning/github', remoteAddress, headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': 'AAAA', ...headers }, payload: body });
      const bodies: PassThrough[] = [];
      const held: Promise<{ statusCode: number }>[] = [];
      for (let net = 0; net < 4; net++)
        for (let host = 1; host <= 4; host++)
          for (let i = 0; i < 2; i++) {
            const body = new PassThrough();
            bodies.push(body);
            held.push(alert(`2001:db8:0:${net}::${host}`, { 'transfer-encoding': 'chunked' }, body));
            body.write('[');
          }
      await new Promise((r) => setTimeout(r, 300));
      expect(await (await s.fetch(`${s.base}/metrics`)).text()).toMatch(/^teamkeys_anonymous_body_bytes\{pool="webhooks"\} 32$/m);
      // GitHub's alert is read and judged (401: this signature is made up), not refused.
      expect((await alert('192.30.252.1', {}, '[]')).statusCode).toBe(401);
      for (const b of bodies) b.end(']');
      await Promise.all(held);
    } finally {
      await s.close();
      await keys.close();
    }
  });

  it('a body counts at most as its route allows, and not at all without one', () => {
    expect(bodyBound('POST', { 'content-length': '10' }, 64)).toBe(10);
    expect(bodyBound('POST', { 'content-length': '1000000' }, 64)).toBe(64);
    expect(bodyBound('PUT', { 'transfer-encoding': 'chunked' }, 64)).toBe(64);
    expect(bodyBound('POST', {}, 64)).toBe(0);
    expect(bodyBound('POST', { 'content-length': '0' }, 64)).toBe(0);
    // fastify reads no body of these, whatever their headers say.
    for (const method of ['GET', 'HEAD', 'TRACE']) expect(bodyBound(method, { 'content-length': '10' }, 64), method).toBe(0);
  });
});
