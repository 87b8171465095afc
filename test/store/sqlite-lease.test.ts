/**
 * The SQLite background-work lease (issue 28, point 6) on a real file, two holders as two
 * processes would be: one holds it and keeps it by renewing; a holder that stops renewing (a
 * process that died or stalled) loses it to the other after the expiry and is told it lost it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteLease } from '../../src/store/backends/sqlite-lease.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-sqlite-lease-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the SQLite lease', () => {
  it('one holder at a time; renewal keeps it past the expiry; a holder that stops renewing loses it and hears so', async () => {
    const path = join(dir, 'lease.db');
    const store = new SqliteStore(path); // makes the file and its schema, as serve does
    const a = new SqliteLease(path, { ttlMs: 400, renewMs: 80 });
    const b = new SqliteLease(path, { ttlMs: 400, renewMs: 80 });
    let aLost = 0;
    a.onLost(() => aLost++);
    try {
      expect(await a.tryAcquire()).toBe(true);
      expect(await b.tryAcquire()).toBe(false);
      await sleep(1_000); // more than twice the ttl: a renewed all along
      expect(await b.tryAcquire()).toBe(false);
      expect(aLost).toBe(0);
      // a stalls (its renewals stop, as in a process that froze): b takes over after the expiry.
      clearInterval((a as unknown as { renewal: NodeJS.Timeout }).renewal);
      await sleep(500);
      expect(await b.tryAcquire()).toBe(true);
      // a's next renewal finds b's row: it lost the lease and is told.
      (a as unknown as { renew(): void }).renew();
      expect(aLost).toBe(1);
      // Released on stop: free at once for the next.
      await b.release();
      expect(await a.tryAcquire()).toBe(true);
    } finally {
      await a.release();
      await b.release();
      await store.close();
    }
  });
});
