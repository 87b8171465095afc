import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { describeStoreConformance } from './conformance.js';

describeStoreConformance('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-sqlite-'));
  const path = join(dir, 'store.db');
  const store = new SqliteStore(path, { pollIntervalMs: 20 });
  return {
    store,
    reopen: () => new SqliteStore(path, { pollIntervalMs: 20 }),
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}, { sharedHandles: true });

describe('SQLite durability settings', () => {
  it('reads journal_mode and synchronous back from the open connection: WAL and FULL by default, NORMAL only when asked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-sqlite-'));
    try {
      const full = new SqliteStore(join(dir, 'full.db'));
      expect(full.durability()).toEqual({ journalMode: 'wal', synchronous: 'FULL' });
      await full.close();
      const normal = new SqliteStore(join(dir, 'normal.db'), { synchronous: 'NORMAL' });
      expect(normal.durability()).toEqual({ journalMode: 'wal', synchronous: 'NORMAL' });
      await normal.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
