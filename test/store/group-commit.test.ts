/**
 * Group commit in the backends that batch writes (SQLite's writer thread, PostgreSQL's batcher):
 * writes submitted together, some of which must fail, each get their own outcome, a refused write
 * takes no revision, and the log stays dense and in order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/backends/postgres.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import type { Store, StoredObject } from '../../src/store/types.js';
import { collect } from './conformance.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

interface Obj extends StoredObject {
  metadata: { name: string; resourceVersion?: string };
  spec: { n: number; key?: string };
}

async function concurrentWrites(store: Store): Promise<void> {
  store.setIndexer((key, o) => (key.startsWith('/keys/') ? (o as Obj).spec.key : undefined));
  await store.create<Obj>('/counters/c', { metadata: { name: 'c' }, spec: { n: 0 } });
  const start = await store.currentRevision();
  // 20 names, 8 of them twice; 9 keys over 3 values; 10 increments of one counter: all at once.
  const names = Array.from({ length: 28 }, (_, i) => `t${i % 20}`);
  const settled = await Promise.allSettled([
    ...names.map((n) => store.create<Obj>(`/teams/${n}`, { metadata: { name: n }, spec: { n: 0 } })),
    ...Array.from({ length: 9 }, (_, i) => store.create<Obj>(`/keys/k${i}`, { metadata: { name: `k${i}` }, spec: { n: 0, key: `v${i % 3}` } })),
    ...Array.from({ length: 10 }, () => store.guaranteedUpdate<Obj>('/counters/c', undefined, (c) => ({ ...c, spec: { n: c.spec.n + 1 } }))),
  ]);
  const codes = settled.map((s) => (s.status === 'fulfilled' ? 'ok' : (s.reason as { code: string }).code));
  const teams = codes.slice(0, 28);
  const keys = codes.slice(28, 37);
  for (let i = 0; i < 20; i++) expect(teams.filter((_, j) => j % 20 === i).sort(), `t${i}`).toEqual(i < 8 ? ['KeyExists', 'ok'] : ['ok']);
  for (let v = 0; v < 3; v++) expect(keys.filter((_, j) => j % 3 === v).sort(), `v${v}`).toEqual(['IndexConflict', 'IndexConflict', 'ok']);
  expect(codes.slice(37)).toEqual(Array(10).fill('ok'));
  expect((await store.get<Obj>('/counters/c')).spec.n).toBe(10);

  // 20 teams + 3 keys + 10 updates: exactly that many revisions, dense, and each answer's revision stored.
  const current = await store.currentRevision();
  expect(current - start).toBe(33);
  const events = await collect(store.watch<Obj>('/', start), 33);
  expect(events.map((e) => e.revision)).toEqual(Array.from({ length: 33 }, (_, i) => start + 1 + i));
  for (const s of settled.slice(0, 37)) {
    if (s.status !== 'fulfilled') continue;
    const o = s.value as Obj;
    const key = o.spec.key ? `/keys/${o.metadata.name}` : `/teams/${o.metadata.name}`;
    expect((await store.get<Obj>(key)).metadata.resourceVersion).toBe(o.metadata.resourceVersion);
  }
}

describe('group commit: SQLite writer thread', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-group-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives each of many concurrent writes its own outcome; the log stays dense and ordered', async () => {
    const store = new SqliteStore(join(dir, 'store.db'), { threads: true, pollIntervalMs: 20 });
    try {
      await concurrentWrites(store);
    } finally {
      await store.close();
    }
  });
});

describe('group commit: PostgreSQL', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(() => server?.stop());

  it('gives each of many concurrent writes its own outcome; the log stays dense and ordered', async () => {
    const store = new PostgresStore(await server.database(), { pollIntervalMs: 50 });
    try {
      await concurrentWrites(store);
    } finally {
      await store.close();
    }
  });
});
