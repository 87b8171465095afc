/**
 * The SQLite store notices its file replaced or overwritten under it (inode and header checks),
 * not only removed (test/server/store-ground.test.ts): writes are refused as Unreachable (the
 * API's 503) and ping (/readyz) fails, with the reason; reads of what it holds go on.
 */
import { copyFileSync, mkdtempSync, openSync, renameSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { eventually } from '../support/eventually.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-ground-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cases: [string, (path: string) => void, string][] = [
  [
    'replaced by another file (a restore copied over it)',
    (path) => {
      copyFileSync(path, `${path}.copy`);
      renameSync(`${path}.copy`, path);
    },
    'the SQLite file was replaced by another file under the running server',
  ],
  [
    'overwritten in place',
    (path) => {
      const fd = openSync(path, 'r+');
      writeSync(fd, Buffer.from('not a database!!'), 0, 16, 0);
      closeSync(fd);
    },
    "the SQLite file was overwritten under the running server (its header is not SQLite's)",
  ],
];

describe.each([false, true])('the SQLite store (worker threads: %s) under a file', (threads) => {
  it.each(cases)('%s: refuses writes as Unreachable and fails ping, saying why', async (_name, damage, why) => {
    const path = join(dir, `${threads ? 't' : 'i'}-${Math.random().toString(36).slice(2)}.db`);
    const store = new SqliteStore(path, { threads, groundCheckMs: 50 });
    try {
      await store.create('/teams/kept', { metadata: {} });
      damage(path);
      const refused = await eventually('a write is refused', () => store.create(`/teams/t-${Date.now()}`, { metadata: {} }).then(() => undefined, (err: unknown) => err));
      expect(refused).toMatchObject({ code: 'Unreachable', message: why });
      await expect(store.ping()).rejects.toMatchObject({ code: 'Unreachable', message: why });
      expect((await store.get('/teams/kept')).metadata?.resourceVersion).toBeDefined();
    } finally {
      await store.close();
    }
  });
});
