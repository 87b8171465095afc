/**
 * The WAL stays bounded: a reader holding an old snapshot makes it grow (no checkpoint may pass
 * the reader), and once the reader leaves the store truncates it back under its limit
 * (journal_size_limit, and the writer thread's truncating checkpoint), rather than keeping the
 * grown file for good.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { walSizeLimitBytes } from '../../src/store/backends/sqlite-backend.js';
import { eventually } from '../support/eventually.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-wal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the SQLite WAL behind a long reader', () => {
  it('grows while the reader holds its snapshot, and is truncated under its limit once the reader leaves', async () => {
    const path = join(dir, 'wal.db');
    const wal = `${path}-wal`;
    const store = new SqliteStore(path, { threads: true, synchronous: 'NORMAL' });
    try {
      await store.create('/teams/seed', { metadata: {} });
      // Another process's long read (a backup, `teamkeys get` on a big list): a snapshot held open.
      const reader = new Database(path, { readonly: true });
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM kv').get();
      const filler = 'x'.repeat(3000);
      for (let batch = 0; batch < 60; batch++) {
        await Promise.all(Array.from({ length: 50 }, (_, i) => store.create(`/teams/t-${batch}-${i}`, { metadata: {}, spec: { filler } })));
      }
      const grown = statSync(wal).size;
      expect(grown, 'the WAL grew behind the reader').toBeGreaterThan(2 * walSizeLimitBytes);
      reader.exec('COMMIT');
      reader.close();

      const shrunk = await eventually('the WAL is truncated under its limit', () => {
        const size = statSync(wal).size;
        return size <= walSizeLimitBytes ? size : undefined;
      });
      process.stdout.write(`WAL: ${(grown / 1048576).toFixed(1)} MB behind the reader, ${(shrunk / 1048576).toFixed(1)} MB after it left (limit ${walSizeLimitBytes / 1048576} MB)\n`);
      expect((await store.list('/teams/')).items).toHaveLength(3001);
    } finally {
      await store.close();
    }
  }, 60_000);
});
