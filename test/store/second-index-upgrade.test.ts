/**
 * Stores written before an object could carry a second index value (an access key's previous
 * value, issue 27) gain the column and its index when opened: the keys already there are found as
 * before, a rotation's two values are found by either, and both lookups stay indexed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/backends/postgres.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import type { Indexer, Store, StoredObject } from '../../src/store/types.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

interface Obj extends StoredObject {
  metadata: { name: string; uid?: string; resourceVersion?: string };
  spec: { hashes: string[] };
}
const indexer: Indexer = (key, o) => (key.startsWith('/ownedaccesskeys/') ? (o as Obj).spec.hashes : undefined);
const names = async (store: Store, v: string) => (await store.getByIndex<Obj>('/ownedaccesskeys/', v)).map((o) => o.metadata.name);

/** Written as an older version would, then rotated under this one. */
async function rotateAcrossTheUpgrade(open: () => Store, downgrade: () => Promise<void>): Promise<void> {
  const before = open();
  before.setIndexer((key, o) => (key.startsWith('/ownedaccesskeys/') ? (o as Obj).spec.hashes[0] : undefined));
  await before.create<Obj>('/ownedaccesskeys/ci', { metadata: { name: 'ci' }, spec: { hashes: ['current'] } });
  await before.close();
  await downgrade();
  const store = open();
  try {
    store.setIndexer(indexer);
    expect(await names(store, 'current')).toEqual(['ci']);
    await store.guaranteedUpdate<Obj>('/ownedaccesskeys/ci', undefined, (c) => ({ ...c, spec: { hashes: ['next', 'current'] } }));
    expect(await names(store, 'next')).toEqual(['ci']);
    expect(await names(store, 'current')).toEqual(['ci']);
    await expect(store.create<Obj>('/ownedaccesskeys/other', { metadata: { name: 'other' }, spec: { hashes: ['current'] } })).rejects.toMatchObject({ code: 'IndexConflict' });
  } finally {
    await store.close();
  }
}

describe('the second index column is added to existing stores', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-idx2-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('SQLite: an old file gains idx2 and its partial index; lookups by either value use the indexes', async () => {
    const path = join(dir, 'old.db');
    await rotateAcrossTheUpgrade(
      () => new SqliteStore(path),
      async () => {
        const db = new Database(path);
        db.exec('DROP INDEX kv_idx2; ALTER TABLE kv DROP COLUMN idx2;');
        expect(db.prepare<[], { name: string }>('PRAGMA table_info(kv)').all().map((c) => c.name)).not.toContain('idx2');
        db.close();
      },
    );
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'kv_idx2'").get()).toEqual({ name: 'kv_idx2' });
      const plan = db
        .prepare<[], { detail: string }>(
          `EXPLAIN QUERY PLAN SELECT kv.id FROM kv WHERE (kv.idx = 'a' OR kv.idx2 = 'a') AND kv.name >= '/ownedaccesskeys/' AND kv.name < '/ownedaccesskeys0' AND kv.deleted = 0
             AND kv.id = (SELECT MAX(k2.id) FROM kv k2 WHERE k2.name = kv.name)`,
        )
        .all()
        .map((r) => r.detail);
      expect(plan).toEqual(expect.arrayContaining([expect.stringContaining('USING INDEX kv_idx (idx=?)'), expect.stringContaining('USING INDEX kv_idx2 (idx2=?)')]));
    } finally {
      db.close();
    }
  });

  describe('PostgreSQL', () => {
    let server: PostgresServer;
    beforeAll(async () => {
      server = await startPostgres();
    }, 60_000);
    afterAll(() => server?.stop());

    it('an old database gains idx2 and its partial index', async () => {
      const url = await server.database();
      await rotateAcrossTheUpgrade(
        () => new PostgresStore(url, { pollIntervalMs: 50 }),
        async () => {
          await server.query('DROP INDEX kv_idx2', [], url);
          await server.query('ALTER TABLE kv DROP COLUMN idx2', [], url);
        },
      );
      const indexes = await server.query<{ indexname: string; indexdef: string }>("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'kv'", [], url);
      expect(indexes.find((i) => i.indexname === 'kv_idx2')?.indexdef).toContain('WHERE (idx2 IS NOT NULL)');
      // With as many keys as a real installation has (and statistics on them), the lookup by either
      // value reads both partial indexes, not the keys' range.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(
          `INSERT INTO kv (name, created, deleted, prev_revision, value, idx, idx2)
             SELECT '/ownedaccesskeys/k' || i, true, false, 0, '{}', 'h' || i, CASE WHEN i % 10 = 0 THEN 'p' || i END FROM generate_series(1, 20000) AS i`,
        );
        await client.query('ANALYZE kv');
        const plan = (await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT kv.id FROM kv WHERE (kv.idx = $1 OR kv.idx2 = $1) AND kv.name >= $2 AND kv.name < $3 AND NOT kv.deleted
             AND kv.id = (SELECT MAX(k2.id) FROM kv k2 WHERE k2.name = kv.name)`,
          ['p50', '/ownedaccesskeys/', '/ownedaccesskeys0'],
        )).rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan).toContain('BitmapOr');
        expect(plan).toContain('Bitmap Index Scan on kv_idx ');
        expect(plan).toContain('Bitmap Index Scan on kv_idx2');
      } finally {
        await client.end();
      }
    });
  });
});
