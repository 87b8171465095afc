import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
