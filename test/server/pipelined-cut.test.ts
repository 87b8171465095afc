/**
 * What a request holds comes back when its connection goes, not only when its response ends
 * (src/server/connection-gone.ts): a request pipelined behind a slower one on a connection has its
 * response queued, and when the connection is cut that response never emits 'close'. Places under
 * the bound on bodies sent without a key, GitHub's alerts being read per address, and watch slots
 * were each held for good (the watch's until its time ran out; found by a review, 2026-11-30).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { eventually } from '../support/eventually.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { startGitHubKeysServer, type GitHubKeysServer } from '../support/github-keys-server.js';

/** A revocation form of exactly `size` bytes. */
const form = (size: number) => `token=${'x'.repeat(Math.max(1, size - 6))}`;

describe('requests pipelined behind a slow one, the connection cut', () => {
  // A store whose ping takes 30 ms (a PostgreSQL round trip, and some): GET /readyz is answered late,
  // so a request pipelined behind it on the connection has its response queued, never attached.
  let s: InProcess;
  let keys: GitHubKeysServer;
  beforeAll(async () => {
    keys = await startGitHubKeysServer();
    const store = new CachedStore(new MemoryStore());
    const ping = store.ping.bind(store);
    store.ping = async () => {
      await new Promise((r) => setTimeout(r, 30));
      return ping();
    };
    s = await startInProcess({ store, anonymousBodies: { perClient: 3, totalBytes: 1024 * 1024 }, leakReports: { gitHubKeysUrl: keys.url, limit: { burst: 1000, perSecond: 1000 } }, watchLimits: { maxPerKey: 2 } });
  });
  afterAll(async () => {
    await s?.close();
    await keys?.close();
  });

  /** GET /readyz and `second` on one connection, closed at once. */
  const behindReadyz = (second: string) =>
    new Promise<void>((done) => {
      const socket = connect(Number(new URL(s.base).port), '127.0.0.1', () => {
        socket.write(`GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n${second}`);
        socket.destroy();
        done();
      });
      socket.on('error', () => done());
    });
  const gauge = async () => {
    const text = await (await s.fetch(`${s.base}/metrics`)).text();
    return /^teamkeys_anonymous_body_bytes\{pool="forms"\} (\d+)$/m.exec(text)?.[1];
  };

  it('gives its places back (a response queued behind another never closes; its connection does)', async () => {
    for (let i = 0; i < 8; i++) {
      await behindReadyz('POST /auth/revoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 40\r\n\r\ntoken=');
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await gauge()).toBe('0');
    const served = await fetch(`${s.base}/auth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form(40) });
    expect(served.status).toBe(200);
  });

  it('a watch gives its slot back (2 per key here): the same key watches again', async () => {
    const watch = `GET ${new URL(s.api).pathname}/teams?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${adminKey}\r\n\r\n`;
    for (let i = 0; i < 3; i++) {
      await behindReadyz(watch);
      await new Promise((r) => setTimeout(r, 20));
    }
    const again = await eventually('the key watches again', async () => {
      const res = await s.fetch(`${s.api}/teams?watch=true`);
      if (res.status === 200) return res;
      await res.body?.cancel();
      return undefined;
    });
    await again.body?.cancel();
  });

  it("GitHub's alert route gives its own places back too (2 per address)", async () => {
    for (let i = 0; i < 4; i++) {
      await behindReadyz('POST /auth/secret-scanning/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nGithub-Public-Key-Identifier: k1\r\nGithub-Public-Key-Signature: AAAA\r\nContent-Length: 100\r\n\r\n[');
      await new Promise((r) => setTimeout(r, 20));
    }
    // Read and judged (401: this signature is made up), not refused as one of too many being read.
    await eventually("the address's alerts are read again", async () => {
      const alert = await fetch(`${s.base}/auth/secret-scanning/github`, { method: 'POST', headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': 'AAAA' }, body: '[]' });
      await alert.body?.cancel();
      return alert.status === 401;
    });
  });
  it('many requests waiting on one connection take one listener of it (twenty pipelined watches: no MaxListenersExceededWarning)', async () => {
    const many = await startInProcess({ watchLimits: { maxPerKey: 30 } });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const watch = `GET ${new URL(many.api).pathname}/teams?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${adminKey}\r\n\r\n`;
      const socket = connect(Number(new URL(many.base).port), '127.0.0.1', () => socket.write(watch.repeat(20)));
      socket.on('error', () => {});
      // Every watch has started (the first streams, the others wait their turn on the connection).
      await new Promise((r) => setTimeout(r, 500));
      socket.destroy();
      await new Promise((r) => setTimeout(r, 100));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
      // And all twenty gave their slots back: thirty more fit.
      const again = await Promise.all(Array.from({ length: 30 }, () => many.fetch(`${many.api}/teams?watch=true`)));
      expect(again.map((r) => r.status)).toEqual(new Array(30).fill(200));
      await Promise.all(again.map((r) => r.body?.cancel()));
    } finally {
      process.off('warning', onWarning);
      await many.close();
    }
  });
  it('a body answered before it was read (415 for a Content-Type nobody parses), sent after the answer, is not counted (found by a review: 540 such requests held the forms pool full for good)', async () => {
    const socket = await new Promise<ReturnType<typeof connect>>((resolve) => {
      const c = connect(Number(new URL(s.base).port), '127.0.0.1', () => resolve(c));
      c.on('error', () => {});
    });
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.write('POST /auth/revoke HTTP/1.1\r\nHost: x\r\nContent-Type: bogus\r\nContent-Length: 60000\r\n\r\n');
    await eventually('the 415', () => /^HTTP\/1\.1 415/.test(answer));
    socket.write('x'.repeat(60000));
    await new Promise((r) => setTimeout(r, 300));
    // The connection still open, its body sent: nothing of it is counted.
    expect(await gauge()).toBe('0');
    socket.destroy();
  });
});
