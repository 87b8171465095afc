/**
 * The watch replay window is bounded by what it holds, not only by how many writes it keeps (found
 * by a review): an ordinary key holder merge-patched a 250 KB annotation on its own key, and every
 * write pinned the object and its previous version in the store's window of 4,096 records; at
 * write 4,113 the server stopped with a heap error. Here a key holder writes a 250 KB annotation
 * 300 times, as the review's user did; the server's heap stays within the window's 32 MiB of values
 * (with their decoded events) and the watch lines' 64 MiB, rather than growing by 1 MB a write.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const userKey = `AliceKey${'a'.repeat(50)}`;

describe("the store's replay window", () => {
  let server: InProcess;
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-log-window-'));
  beforeAll(async () => {
    // SQLite, as served: its log is on disk, so what the heap holds is the window's.
    server = await startInProcess({ garbageCollector: false, store: new CachedStore(new SqliteStore(join(dir, 'teamkeys.db'))) });
    const res = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'alice' }, spec: { user: 'alice', key: userKey } }) });
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps a key holder's writes of a large key within its bound", async () => {
    // A watcher, so the window is followed.
    const watch = await fetch(`${server.api}/ownedaccesskeys?watch=true`, { headers: { Authorization: `Bearer ${userKey}` } });
    expect(watch.status).toBe(200);
    const reader = watch.body!.getReader();
    void (async () => {
      while (!(await reader.read()).done);
    })().catch(() => {});
    const write = async (i: number) => {
      const res = await fetch(`${server.api}/ownedaccesskeys/alice`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json', Authorization: `Bearer ${userKey}` }, body: JSON.stringify({ metadata: { annotations: { pad: `${i}`.padEnd(250_000, 'x') } } }) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    };
    for (let i = 0; i < 20; i++) await write(i);
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 20; i < 320; i++) await write(i);
    gc();
    const grown = (process.memoryUsage().heapUsed - before) / 1e6;
    await reader.cancel();
    // 300 writes of 500 KB of values (the object and its previous version): 300 MB held before;
    // now about 100: the window's 32 Mi characters with their decoded events, and 64 MB of watch lines.
    expect(grown).toBeLessThan(150);
  }, 120_000);
});
