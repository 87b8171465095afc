/**
 * A SQLite worker thread that dies (a bug, an out-of-memory in its isolate) is started again: the
 * requests it held fail with Unreachable (503 over HTTP), readiness fails while it is down, and
 * the store then answers as before with nothing lost, without a restart of the server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import type { SqliteThread } from '../../src/store/backends/sqlite-threads.js';
import { isStorageError } from '../../src/store/errors.js';
import type { StoredObject } from '../../src/store/types.js';
import { eventually } from '../support/eventually.js';

interface Obj extends StoredObject {
  metadata: { name: string; resourceVersion?: string };
}

/** Ends the thread from outside, as a crash would (its 'exit' fires; nothing it held is replied to). */
const kill = (thread: SqliteThread) => (thread as unknown as { worker: Worker }).worker.terminate();

describe('SQLite worker threads that die', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-thread-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are restarted: held requests fail as Unreachable, readiness fails meanwhile, then reads and writes go on with nothing lost', async () => {
    const logged: string[] = [];
    const log = { error: (_: object, msg: string) => logged.push(`error: ${msg}`), warn: () => {}, info: (_: object, msg: string) => logged.push(`info: ${msg}`) };
    const store = new SqliteStore(join(dir, 'store.db'), { threads: true, pollIntervalMs: 20, log });
    const { writer, reader } = store.threaded!;
    try {
      for (let i = 0; i < 5; i++) await store.create<Obj>(`/teams/t${i}`, { metadata: { name: `t${i}` } });
      const before = await store.currentRevision();

      // The writer dies with a write in flight.
      const inFlight = store.create<Obj>('/teams/maybe', { metadata: { name: 'maybe' } });
      await kill(writer);
      const outcome = await inFlight.then(() => 'ok', (err: unknown) => (isStorageError(err, 'Unreachable') ? 'Unreachable' : String(err)));
      expect(['ok', 'Unreachable']).toContain(outcome); // committed or not, never a wrong answer
      expect(() => writer.assertAlive()).toThrow(/SQLite is unavailable: the SQLite writer thread exited/);

      await eventually('a write after the restart', () => store.create<Obj>('/teams/after', { metadata: { name: 'after' } }));
      expect(() => writer.assertAlive()).not.toThrow();

      // The reader dies: reads that reach it fail until it is back.
      await kill(reader);
      expect(() => reader.assertAlive()).toThrow(/reader thread exited/);
      const names = await eventually('a list after the restart', async () => (await store.list<Obj>('/teams/')).items.map((o) => o.metadata.name));
      expect(names).toEqual(expect.arrayContaining(['t0', 't1', 't2', 't3', 't4', 'after']));
      expect(names.filter((n) => n !== 'maybe')).toEqual(['after', 't0', 't1', 't2', 't3', 't4']);

      // The log stays dense and ordered across the restarts.
      const current = await store.currentRevision();
      const events = [];
      for await (const e of store.watch('/', before)) {
        events.push(e.revision);
        if (e.revision === current) break;
      }
      expect(events).toEqual(Array.from({ length: current - before }, (_, i) => before + 1 + i));

      expect(logged).toEqual(
        expect.arrayContaining([
          'error: the SQLite writer thread failed; its requests get 503 until it is restarted',
          'info: the SQLite writer thread was restarted',
          'error: the SQLite reader thread failed; its requests get 503 until it is restarted',
          'info: the SQLite reader thread was restarted',
        ]),
      );
    } finally {
      await store.close();
    }
  }, 30_000);

  it('closing while writes keep coming: every write is answered (committed or Closed), the exit is not a failure, nothing restarts', async () => {
    const logged: string[] = [];
    const log = { error: (_: object, msg: string) => logged.push(`error: ${msg}`), warn: () => {}, info: (_: object, msg: string) => logged.push(`info: ${msg}`) };
    const store = new SqliteStore(join(dir, 'close-under-load.db'), { threads: true, log });
    const { writer } = store.threaded!;
    const write = (i: number) => store.create<Obj>(`/teams/w${i}`, { metadata: { name: `w${i}` } }).then(() => 'ok', (err: unknown) => (isStorageError(err, 'Closed') ? 'Closed' : String(err)));
    const before = Array.from({ length: 50 }, (_, i) => write(i));
    // Two closes at once (the store and a shutdown path) are one close.
    const closes = [writer.close(), writer.close()];
    const after = Array.from({ length: 20 }, (_, i) => write(100 + i));
    await Promise.all(closes);
    const outcomes = await Promise.all([...before, ...after]);
    expect(new Set(outcomes)).toEqual(new Set(outcomes.filter((o) => o === 'ok' || o === 'Closed')));
    expect(outcomes.slice(50)).toEqual(Array(20).fill('Closed'));
    await store.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(logged.filter((l) => l.startsWith('error') || l.includes('restarted'))).toEqual([]);
  });

  it('closing a store whose thread is down does not hang and starts nothing again', async () => {
    const store = new SqliteStore(join(dir, 'closing.db'), { threads: true });
    const { writer } = store.threaded!;
    await kill(writer);
    await store.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(() => writer.assertAlive()).toThrow(/closed/);
  });
});
