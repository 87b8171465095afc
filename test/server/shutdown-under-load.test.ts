/**
 * Issue 28, point 7: SIGTERM during load stops `teamkeys serve` on SQLite (worker threads) cleanly,
 * every time: exit 0 well before the forced exit, and no error-level line (a shutdown once logged
 * `the SQLite writer thread exited (code 0)` at error, restarted the thread and hung for 20 s).
 */
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe } from './serve-process.js';

const adminKey = 'AdminKeyForTheShutdownLoadTest0123456789abcdefghi';
const dir = mkdtempSync(join(tmpdir(), 'teamkeys-shutdown-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One request; resolves whatever happens (refused, reset, 503 while closing are all expected here). */
function send(url: URL, method: string, body?: unknown): Promise<void> {
  return new Promise((done) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${adminKey}`, 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' };
    const req = request(url, { method, headers }, (res) => {
      res.resume();
      res.on('end', done);
      res.on('error', () => done());
    });
    req.on('error', () => done());
    req.setTimeout(5_000, () => req.destroy());
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Writers and readers until `until` says stop, each bounded to `max` requests. */
async function load(base: string, worker: number, until: () => boolean, max = 200): Promise<number> {
  const teams = new URL(`${base}/apis/management.service/v1/teams`);
  let n = 0;
  for (; n < max && !until(); n++) {
    const name = `load-${worker}-${n}`;
    await send(teams, 'POST', { metadata: { name }, spec: { displayName: `Load ${n}` } });
    await send(new URL(`${teams.href}/${name}`), 'PATCH', { spec: { displayName: `Patched ${n}` } });
    await send(new URL(`${teams.href}?limit=20`), 'GET');
  }
  return n;
}

const levels = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string });

describe('SIGTERM under load, on SQLite in worker threads', () => {
  it('stops in under 10 s with exit 0 and no error-level line, 10 times in a row', async () => {
    const stops: number[] = [];
    for (let round = 0; round < 10; round++) {
      const db = join(dir, `round-${round}.db`);
      const served = await startServe(['--store', `sqlite:${db}`, '--insecure-http', '--shutdown-grace', '2'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
      let exited = false;
      served.process.once('exit', () => (exited = true));
      const started = Date.now();
      // The load runs on until the process is gone: SIGTERM lands in the middle of it.
      const workers = Array.from({ length: 6 }, (_, w) => load(served.url, w, () => exited || Date.now() - started > 15_000));
      await new Promise((r) => setTimeout(r, 1_500));
      const stopAt = Date.now();
      const code = await served.stop('SIGTERM');
      stops.push(Date.now() - stopAt);
      const done = await Promise.all(workers);
      expect(done.reduce((a, b) => a + b, 0), 'the load made requests').toBeGreaterThan(0);
      expect(code, served.stderr()).toBe(0);
      expect(Date.now() - stopAt, `round ${round}: shutdown took too long\n${served.stderr()}`).toBeLessThan(10_000);
      const errors = levels(served.stderr()).filter((l) => l.level >= 50);
      expect(errors, `round ${round}`).toEqual([]);
    }
    // Printed for the record (docs/reliability.md), not asserted beyond the bound above.
    console.log(`shutdown under load, ms: ${stops.join(', ')}`);
  }, 240_000);
});
