/**
 * Issue 28, point 6: two `teamkeys serve` processes on one SQLite file (supported) run the
 * background work (garbage collection, sweeps, audit trimming) on one of them only: the lease is a
 * row in the file, not a per-process flag. The other takes over when the holder stops.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../daemon/watch-process.js';
import { startServe, type Served } from './serve-process.js';

const adminKey = 'AdminKeyForTheSharedSqliteTest0123456789abcdefgh';
const dir = mkdtempSync(join(tmpdir(), 'teamkeys-shared-sqlite-'));

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const logOf = (s: Served) =>
  s
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
const acquired = (s: Served) => logOf(s).filter((l) => l.msg === 'acquired the background-work lease').length;

describe('two servers on one SQLite file', () => {
  let a: Served;
  let b: Served;
  const stopped = new Set<Served>();
  const api = (s: Served, path: string, init: RequestInit = {}) =>
    fetch(`${s.url}/apis/management.service/v1/${path}`, { ...init, headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' } });

  beforeAll(async () => {
    // One database and one encryption key file: what two servers of one deployment share.
    const shared = ['--store', `sqlite:${join(dir, 'teamkeys.db')}`, '--encryption-key-file', join(dir, 'encryption.yaml'), '--insecure-http'];
    a = await startServe(shared, { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    b = await startServe(shared, { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    // Both had time to try the lease (they retry every second).
    await new Promise((r) => setTimeout(r, 2_500));
  }, 60_000);
  afterAll(async () => {
    for (const s of [a, b]) if (s && !stopped.has(s)) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('only one of them holds the background-work lease', () => {
    expect(acquired(a) + acquired(b)).toBe(1);
  });

  it('only the holder garbage-collects, and neither logs a "not found" from a collection the other did', async () => {
    const holder = acquired(a) === 1 ? a : b;
    const other = holder === a ? b : a;
    for (let i = 0; i < 5; i++) {
      const team = (await (await api(other, 'teams', { method: 'POST', body: JSON.stringify({ metadata: { name: `owner-${i}` }, spec: {} }) })).json()) as { metadata: { uid: string } };
      const ref = { apiVersion: 'management.service/v1', kind: 'Team', name: `owner-${i}`, uid: team.metadata.uid };
      expect((await api(other, 'ownedaccesskeys', { method: 'POST', body: JSON.stringify({ metadata: { name: `dependent-${i}`, ownerReferences: [ref] }, spec: { user: 'u' } }) })).status).toBe(201);
      expect((await api(other, `teams/owner-${i}`, { method: 'DELETE' })).status).toBe(200);
    }
    for (let i = 0; i < 5; i++) await eventually(`dependent-${i} is collected`, async () => ((await api(other, `ownedaccesskeys/dependent-${i}`)).status === 404 ? true : undefined), 15_000);
    // The log line follows the delete it reports (a pipe, read as it comes): under load it arrives after the 404.
    await eventually('the holder logs its collection', () => logOf(holder).some((l) => l.msg === 'garbage collected'), 10_000);
    expect(logOf(other).filter((l) => l.msg === 'garbage collected')).toEqual([]);
    for (const s of [a, b]) expect(logOf(s).filter((l) => l.level >= 40 && /not ?found/i.test(JSON.stringify(l)))).toEqual([]);
  });

  it('when the holder stops, the other takes the lease over', async () => {
    const holder = acquired(a) === 1 ? a : b;
    const other = holder === a ? b : a;
    stopped.add(holder);
    expect(await holder.stop()).toBe(0);
    // A holder that stops releases the row: the other takes it at its next try (about a second).
    await eventually('the other server took the lease', () => (acquired(other) === 1 ? true : undefined), 10_000);
  });
});
