import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';

const writer = new URL('../fixtures/sqlite-writer.ts', import.meta.url).pathname;

/** in-thread: the CLI's embedded store; threads: `teamkeys serve`'s (writer thread, group commit, 8 creates in flight). */
type Mode = 'in-thread' | 'threads';

interface Ack {
  name: string;
  revision: number;
}

/** Writers still running: a failed test must not leave one writing into the next test's file. */
const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts a writer process and resolves with its acknowledged writes once it has been SIGKILLed. */
function runWriterUntilKilled(path: string, prefix: string, killAfterAcks: number, mode: Mode): Promise<Ack[]> {
  const args = mode === 'threads' ? ['threads', '8'] : ['in-thread', '1'];
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', writer, path, prefix, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The writer's own words on why it stopped: a failure says what the writer met, not only its exit code.
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  const acks: Ack[] = [];
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const [word, name, rev] = line.split(' ');
      if (word !== 'ack' || !name) return;
      acks.push({ name, revision: Number(rev) });
      if (acks.length === killAfterAcks) child.kill('SIGKILL');
    });
    child.on('error', reject);
    // 'close', not 'exit': by then the writer's stderr has been read to its end.
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acks);
      else reject(new Error(`writer exited with ${code ?? signal} after ${acks.length} acks:\n${stderr}`));
    });
  });
}

describe.each<Mode>(['in-thread', 'threads'])('SQLite durability across kill -9 (%s)', (mode) => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-crash-'));
  const path = join(dir, 'store.db');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every acknowledged write when two concurrent writer processes are killed, over several cycles', async () => {
    const acked: Ack[] = [];
    for (let cycle = 0; cycle < 4; cycle++) {
      const killAt = 20 + Math.floor(Math.random() * 60);
      const results = await Promise.all([
        runWriterUntilKilled(path, `c${cycle}a`, killAt, mode),
        runWriterUntilKilled(path, `c${cycle}b`, killAt + 7, mode),
      ]);
      for (const acks of results) {
        expect(acks.length).toBeGreaterThanOrEqual(killAt);
        acked.push(...acks);
      }
      const store = new SqliteStore(path);
      try {
        const { items, revision } = await store.list<{ metadata: { name: string; resourceVersion: string }; spec: { users: string[] } }>(
          '/teams/',
        );
        const byName = new Map(items.map((i) => [i.metadata.name, i]));
        for (const ack of acked) {
          const item = byName.get(ack.name);
          expect(item, `acknowledged ${ack.name} is missing after cycle ${cycle}`).toBeDefined();
          expect(item!.metadata.resourceVersion).toBe(String(ack.revision));
          expect(item!.spec.users).toHaveLength(20);
        }
        // Revisions are unique and never exceed the store's revision: the two writers were serialized.
        const revisions = items.map((i) => Number(i.metadata.resourceVersion));
        expect(new Set(revisions).size).toBe(revisions.length);
        expect(Math.max(...revisions)).toBeLessThanOrEqual(revision);
      } finally {
        await store.close();
      }
    }
  }, 120_000);

  it("a watcher in this process sees another process's writes, in revision order", async () => {
    const store = new SqliteStore(path, { pollIntervalMs: 50 });
    try {
      const start = await store.currentRevision();
      const watch = store.watch<{ metadata: { name: string; uid?: string } }>('/teams/', start);
      const acks = await runWriterUntilKilled(path, 'watched', 30, mode);
      const seen: { name: string; revision: number }[] = [];
      const timer = setTimeout(() => watch.stop(), 10_000);
      for await (const e of watch) {
        seen.push({ name: e.object.metadata.name, revision: e.revision });
        if (seen.length >= acks.length) break;
      }
      clearTimeout(timer);
      watch.stop();
      expect(seen.slice(0, acks.length)).toEqual(acks);
    } finally {
      await store.close();
    }
  }, 60_000);
});
