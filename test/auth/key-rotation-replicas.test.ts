/**
 * Rotation across replicas and under load (issue 27): two API servers on one SQLite file, each
 * behind its own watch cache, both accept both values during the overlap and refuse the previous
 * one after it; and a job that keeps making requests with the value it holds, switching to the new
 * one when it reads it, never sees a 401 across the rotation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { ManualClock } from '../support/clock.js';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create, json } from './fixture.js';

const t0 = '2026-11-27T10:00:00Z';

describe('rotation over replicas and under load', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  const use = async (s: InProcess, key: string) => {
    const res = await s.fetch(`${s.api}/teams`, { headers: { Authorization: `Bearer ${key}` } });
    return { status: res.status, message: ((await res.json()) as { message?: string }).message };
  };
  const rotate = async (s: InProcess, name: string, spec: Record<string, unknown>) => {
    const res = await s.fetch(`${s.api}/ownedaccesskeys/${name}/rotation`, { method: 'POST', headers: json, body: JSON.stringify({ kind: 'KeyRotation', spec }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { spec: { key: string } }).spec.key;
  };

  it('two servers on one SQLite file both accept both values during the overlap and refuse the previous one after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-rotation-replicas-'));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    const clock = new ManualClock(t0);
    const replica = async () => {
      const s = await startInProcess({ now: clock.now, store: new CachedStore(new SqliteStore(join(dir, 'teamkeys.db'), { pollIntervalMs: 50 })) });
      closers.unshift(() => s.close());
      return s;
    };
    const a = await replica();
    const b = await replica();
    const created = await create(a, 'ownedaccesskeys', { metadata: { name: 'ci' }, spec: { user: 'ci' } });
    const old = ((await created.json()) as { spec: { key: string } }).spec.key;
    expect((await use(b, old)).status).toBe(200);
    // Rotated through one replica: the other knows the new value and still takes the old at once.
    const fresh = await rotate(a, 'ci', { overlapSeconds: 600 });
    for (const s of [a, b]) {
      expect((await use(s, old)).status).toBe(200);
      expect((await use(s, fresh)).status).toBe(200);
    }
    clock.advance(600_000);
    for (const s of [a, b]) {
      expect(await use(s, old)).toEqual({ status: 401, message: 'access key "ci" was rotated at 2026-11-27T10:00:00Z; its previous value stopped working at 2026-11-27T10:10:00Z' });
      expect((await use(s, fresh)).status).toBe(200);
    }
    // Rotated again through the other replica, awaiting confirmation: both take the value clients hold.
    const third = await rotate(b, 'ci', { overlapSeconds: 60, awaitConfirmation: true });
    clock.advance(3_600_000);
    for (const s of [a, b]) {
      expect((await use(s, fresh)).status).toBe(200);
      expect((await use(s, third)).status).toBe(200);
      expect((await use(s, old)).status).toBe(401);
    }
  });

  it('a job making requests with the value it holds across a rotation sees no 401', async () => {
    const clock = new ManualClock(t0);
    const s = await startInProcess({ now: clock.now });
    closers.push(() => s.close());
    const created = await create(s, 'ownedaccesskeys', { metadata: { name: 'job' }, spec: { user: 'job' } });
    let held = ((await created.json()) as { spec: { key: string } }).spec.key;
    const original = held;
    let delivered: string | undefined;
    const statuses = new Map<number, number>();
    let usedPrevious = 0;
    // The job: 400 requests, each with the value it holds; it picks up a delivered value between requests.
    const job = (async () => {
      for (let i = 0; i < 400; i++) {
        if (delivered && i % 7 === 0) held = delivered;
        const { status } = await use(s, held);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (delivered && held !== delivered) usedPrevious++;
        clock.advance(1000);
      }
    })();
    // The rotation, part-way through: delivered to the job only after the write returned.
    await new Promise((r) => setTimeout(r, 30));
    delivered = await rotate(s, 'job', { overlapSeconds: 300 });
    await job;
    expect([...statuses]).toEqual([[200, 400]]);
    // The job did use the previous value after the rotation; once the overlap is over, that value is refused.
    expect(usedPrevious).toBeGreaterThan(0);
    clock.advance(300_000);
    expect((await use(s, original)).status).toBe(401);
    expect((await use(s, held)).status).toBe(200);
  });
});
