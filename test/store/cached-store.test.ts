/** The watch cache keeps every promise of the Store contract, over the memory and SQLite stores. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { describeStoreConformance } from './conformance.js';

describeStoreConformance('watch cache over memory', async () => {
  const store = new CachedStore(new MemoryStore()).start();
  return { store, cleanup: () => store.close() };
}, { sharedHandles: false });

describeStoreConformance('watch cache over sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-cache-'));
  const path = join(dir, 'store.db');
  const store = new CachedStore(new SqliteStore(path, { pollIntervalMs: 20 })).start();
  return {
    store,
    reopen: () => new CachedStore(new SqliteStore(path, { pollIntervalMs: 20 })).start(),
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}, { sharedHandles: true });
