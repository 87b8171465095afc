import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { describeStoreConformance } from './conformance.js';

for (const threads of [false, true]) {
  describeStoreConformance(threads ? 'sqlite (worker threads, group commit)' : 'sqlite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-sqlite-'));
    const path = join(dir, 'store.db');
    const store = new SqliteStore(path, { pollIntervalMs: 20, threads });
    return {
      store,
      reopen: () => new SqliteStore(path, { pollIntervalMs: 20, threads }),
      cleanup: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }, { sharedHandles: true });
}

describe('SQLite durability settings', () => {
  it('reads journal_mode and synchronous back from the open connection: WAL and FULL by default, NORMAL only when asked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-sqlite-'));
    try {
      const full = new SqliteStore(join(dir, 'full.db'));
      expect(await full.durability()).toEqual({ journalMode: 'wal', synchronous: 'FULL' });
      await full.close();
      const normal = new SqliteStore(join(dir, 'normal.db'), { synchronous: 'NORMAL' });
      expect(await normal.durability()).toEqual({ journalMode: 'wal', synchronous: 'NORMAL' });
      await normal.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
