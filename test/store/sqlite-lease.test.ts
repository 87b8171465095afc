/**
 * The SQLite background-work lease (issue 28, point 6; issue 41, point 1) on a real file, two
 * holders as two processes would be: one holds it and keeps it by renewing; a holder that stops
 * renewing (a process that stalled) counts it lost by its own deadline, another takes it after the
 * expiry with a higher fencing token, and the store refuses the stalled holder's writes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteLease } from '../../src/store/backends/sqlite-lease.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { isStorageError, type StorageError } from '../../src/store/errors.js';
import type { Fence } from '../../src/store/fence.js';
import { fencedStore } from '../../src/store/fenced-store.js';
import { eventually } from '../support/eventually.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-sqlite-lease-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A lease whose renewals can be made to hang, as in a process that froze or lost its file system. */
class StallingLease extends SqliteLease {
  stalled = false;
  protected override extend(token: number): Promise<boolean> {
    return this.stalled ? new Promise(() => {}) : super.extend(token);
  }
}

/** A fence for `token` whose refusals are collected, as the leader's are. */
function fenceOf(token: number, refused: StorageError[] = []): Fence {
  return { token, valid: () => true, refused: (err) => refused.push(err) };
}

describe.each([{ threads: false }, { threads: true }])('the SQLite lease (store threads: $threads)', ({ threads }) => {
  it('one holder at a time; renewal keeps it past the expiry; a stalled holder steps down and its writes are refused', async () => {
    const path = join(dir, `lease-${threads}.db`);
    const store = new SqliteStore(path, { threads }); // makes the file and its schema, as serve does
    const a = new StallingLease(path, { ttlMs: 400, renewMs: 80 });
    const b = new SqliteLease(path, { ttlMs: 400, renewMs: 80 });
    const aLost: string[] = [];
    a.onLost((reason) => aLost.push(reason));
    try {
      expect(await a.tryAcquire()).toBe(true);
      const aToken = a.token()!;
      expect(await b.tryAcquire()).toBe(false);
      await sleep(1_000); // more than twice the ttl: a renewed all along
      expect(await b.tryAcquire()).toBe(false);
      expect(aLost).toEqual([]);
      await fencedStore(store, () => fenceOf(aToken)).create('/t/by-a', { metadata: {} });

      // a stalls: it counts the lease lost at its deadline, and b takes it after the expiry.
      a.stalled = true;
      await eventually('a steps down', () => aLost.length === 1);
      expect(aLost[0]).toMatch(/no renewal succeeded within/);
      expect(a.valid()).toBe(false);
      await eventually('b takes the lease once it expired', () => b.tryAcquire());
      const bToken = b.token()!;
      expect(bToken).toBeGreaterThan(aToken);

      // A write still carrying a's token (background work of a that had not stopped) is refused; b's goes in.
      const refused: StorageError[] = [];
      const stale = await fencedStore(store, () => fenceOf(aToken, refused)).create('/t/stale', { metadata: {} }).catch((err: unknown) => err);
      expect(isStorageError(stale, 'Fenced'), String(stale)).toBe(true);
      expect((stale as Error).message).toContain(`fencing token ${aToken}`);
      expect(refused).toHaveLength(1);
      await expect(store.get('/t/stale')).rejects.toThrow(/not found/);
      await fencedStore(store, () => fenceOf(bToken)).delete('/t/by-a');
      // Requests carry no fence and are never refused for it.
      await store.create('/t/request', { metadata: {} });

      // Released on stop: free at once for the next, with a token higher still.
      await b.release();
      a.stalled = false;
      expect(await a.tryAcquire()).toBe(true);
      expect(a.token()).toBeGreaterThan(bToken);
    } finally {
      await a.release();
      await b.release();
      await store.close();
    }
  });
});
