/**
 * SIGTERM right after a burst of writes, with watchers that read slowly or not at all, over
 * keep-alive connections: `teamkeys serve` exits within a bound every time. The bug this guards
 * against: a watch still draining when the server closed kept its connection open for fastify's
 * 72 s keep-alive timeout once it went idle, and a watcher that stopped reading held it forever.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from './serve-process.js';

const adminKey = `Shutdown${'s'.repeat(52)}`;
const headers = { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' };

/**
 * Opens a watch on a keep-alive connection that reads nothing until resumed (fetch would buffer
 * for it, and close it once garbage); like any pooling client it keeps the connection afterwards.
 */
async function openPausedWatch(api: string): Promise<Socket> {
  const url = new URL(`${api}/teams?watch=true`);
  const socket = connect(Number(url.port), url.hostname);
  await once(socket, 'connect');
  socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${headers.Authorization}\r\nConnection: keep-alive\r\n\r\n`);
  await once(socket, 'data');
  socket.pause();
  socket.on('error', () => {});
  return socket;
}

/** Creates teams from 4 clients until `stop` or 200 creates; `progress.acked` counts the 201s. */
async function writeBurst(api: string, prefix: string, padding: string, until: { stop: boolean }, progress: { acked: number }): Promise<void> {
  await Promise.all(
    Array.from({ length: 4 }, async (_, w) => {
      for (let n = 0; n < 50 && !until.stop; n++) {
        const res = await fetch(`${api}/teams`, { method: 'POST', headers, body: JSON.stringify({ metadata: { name: `${prefix}-${w}-${n}`, annotations: { padding } } }) }).catch(() => undefined);
        if (res?.status === 201) progress.acked++;
        await res?.body?.cancel();
      }
    }),
  );
}

/** Sends SIGTERM and returns how long the process took to exit (Infinity past waitMs, then SIGKILL). */
async function terminate(served: Served, waitMs: number): Promise<{ ms: number; code: number | null }> {
  const sent = Date.now();
  const exited = new Promise<number | null>((r) => served.process.once('exit', (code) => r(code)));
  served.process.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise<'late'>((r) => setTimeout(() => r('late'), waitMs))]);
  if (code === 'late') {
    served.process.kill('SIGKILL');
    return { ms: Infinity, code: null };
  }
  return { ms: Date.now() - sent, code };
}

describe('SIGTERM after load with slow-reading watchers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-shutdown-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * Four watchers fall 6 MB behind (more than loopback socket buffers hold, so their responses
   * block) during a burst of creates; SIGTERM comes mid-burst. `catchUp` watchers then read
   * everything; the others never read again.
   */
  const cycle = async (n: number, graceSeconds: number, catchUp: boolean) => {
    const served = await startServe(['--store', `sqlite:${join(dir, `s${n}.db`)}`, '--insecure-http', '--log-level', 'warn', '--shutdown-grace', String(graceSeconds)], {
      env: { TEAMKEYS_ADMIN_KEY: adminKey },
    });
    const api = `${served.url}/apis/management.service/v1`;
    const sockets: Socket[] = [];
    for (let i = 0; i < 4; i++) sockets.push(await openPausedWatch(api));
    const until = { stop: false };
    const progress = { acked: 0 };
    const writing = writeBurst(api, `c${n}`, 'x'.repeat(60_000), until, progress);
    for (let waited = 0; progress.acked < 100 && waited < 30_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    const exiting = terminate(served, (graceSeconds + 30) * 1000);
    if (catchUp) for (const s of sockets) s.resume();
    const exit = await exiting;
    until.stop = true;
    await writing;
    for (const s of sockets) s.destroy();
    await served.stop();
    return { ...exit, acked: progress.acked, log: served.stderr() };
  };

  it('with watchers that catch up after SIGTERM: exits cleanly without waiting out the grace period, 3 times', async () => {
    for (let n = 0; n < 3; n++) {
      const r = await cycle(n, 60, true);
      process.stdout.write(`shutdown: watchers caught up, exited ${r.code} after ${r.ms} ms (${r.acked} creates acknowledged)\n`);
      expect(r.acked, 'writes were acknowledged before SIGTERM').toBeGreaterThan(0);
      // Before the fix: 72 s, fastify's keep-alive timeout, for a connection that went idle after close.
      expect({ cycle: n, code: r.code, withinBound: r.ms < 20_000 }, r.log.slice(-2000)).toEqual({ cycle: n, code: 0, withinBound: true });
      expect(r.log).not.toContain('still open after the shutdown grace period');
    }
  }, 150_000);

  it('with watchers that stopped reading: connections are cut after the grace period and the process exits, 3 times', async () => {
    for (let n = 3; n < 6; n++) {
      const r = await cycle(n, 2, false);
      process.stdout.write(`shutdown: watchers stalled, exited ${r.code} after ${r.ms} ms (grace 2 s, ${r.acked} creates acknowledged)\n`);
      expect(r.acked).toBeGreaterThan(0);
      // Before the fix: never (the stalled responses could not finish).
      expect({ cycle: n, code: r.code, withinBound: r.ms < 2_000 + 10_000 }, r.log.slice(-2000)).toEqual({ cycle: n, code: 0, withinBound: true });
      expect(r.log).toContain('connections still open after the shutdown grace period; closing them');
    }
  }, 150_000);
});
