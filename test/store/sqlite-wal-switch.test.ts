import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';

const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * Another process writing to a new file (still in rollback mode) while this one opens it: what two
 * processes starting at once on a new file meet. It holds its write lock for holdMs, then lets go.
 */
async function holdWriteLock(path: string, holdMs: number): Promise<{ released: Promise<void> }> {
  const script = `
    const Database = require(${JSON.stringify(betterSqlite)});
    const db = new Database(process.argv[1]);
    db.exec('CREATE TABLE IF NOT EXISTS other (x)');
    db.exec('BEGIN IMMEDIATE');
    db.exec('INSERT INTO other VALUES (1)');
    process.stdout.write('held\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${holdMs});`;
  const child = spawn(process.execPath, ['-e', script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`lock holder exited with ${code}`))));
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    exited.catch(reject);
  });
  // Wrapped: an async function returning the promise itself would wait for it.
  return { released: exited };
}

describe('opening a new SQLite file another process is writing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-wal-switch-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('waits for the lock and switches the file to WAL instead of failing with "database is locked"', async () => {
    for (const threads of [false, true]) {
      const path = join(dir, `store-${threads ? 'threads' : 'in-thread'}.db`);
      const { released } = await holdWriteLock(path, 300);
      const store = new SqliteStore(path, { threads });
      try {
        await released;
        expect(await store.durability()).toMatchObject({ journalMode: 'wal' });
        const created = await store.create('/teams/after-the-race', { metadata: { name: 'after-the-race', uid: 'u1' } });
        expect(created.metadata).toMatchObject({ name: 'after-the-race' });
      } finally {
        await store.close();
      }
    }
  }, 60_000);
});
