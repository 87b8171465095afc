/**
 * lock.healthz: the server's event-loop delay p99 while another process keeps taking the SQLite
 * write lock (as `teamkeys create` beside the server does), clients keep reading and a few keep
 * writing; beside the same p99 with no lock holder. With writes in worker threads the held lock
 * delays only the writes that need it; on the event loop it stalled everything (docs/performance.md).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startServe, type Served } from '../test/server/serve-process.js';
import { figure, load, tempDir, type Figure, type Settings } from './lib.js';

const root = new URL('../', import.meta.url).pathname;
const adminKey = `Bench${'b'.repeat(59)}`;
const auth = { Authorization: `Bearer ${adminKey}` };

/** A process that holds the write lock 1 s out of every 1.3 s until killed. */
function lockHolder(db: string): ChildProcess {
  const script = `
    const Database = require(${JSON.stringify(join(root, 'node_modules/better-sqlite3'))});
    const db = new Database(process.argv[1]);
    db.pragma('busy_timeout = 10000');
    const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    for (;;) { db.exec('BEGIN IMMEDIATE'); sleep(1000); db.exec('COMMIT'); sleep(300); }`;
  return spawn(process.execPath, ['-e', script, db], { stdio: 'ignore' });
}

/** The p99 (ms) of the server's event-loop delay over one phase: reads under load, a create every 100 ms, /healthz polled. */
async function phase(server: Served, s: Settings, withHolder: string | undefined): Promise<{ p99: number; healthzMaxMs: number; creates: number }> {
  const holder = withHolder ? lockHolder(withHolder) : undefined;
  await new Promise((r) => setTimeout(r, 300));
  const api = `${server.url}/apis/management.service/v1`;
  const marks = () => server.stderr().split('\n').filter((l) => l.startsWith('loop-delay ')).length;
  const reset = marks();
  server.process.kill('SIGUSR2');
  for (let i = 0; i < 50 && marks() === reset; i++) await new Promise((r) => setTimeout(r, 20));
  let running = true;
  let creates = 0;
  let healthzMaxMs = 0;
  const writer = (async () => {
    for (let i = 0; running; i++) {
      const res = await fetch(`${api}/teams`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { generateName: 'lock-' } }) });
      if (res.status === 201) creates++;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const health = (async () => {
    while (running) {
      const start = performance.now();
      await fetch(`${new URL(server.url).origin}/healthz`);
      healthzMaxMs = Math.max(healthzMaxMs, performance.now() - start);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await load(`${api}/teams/existing`, { ...s, connections: 10 }, { headers: auth });
  running = false;
  await Promise.all([writer, health]);
  const before = marks();
  server.process.kill('SIGUSR2');
  for (let i = 0; i < 50 && marks() === before; i++) await new Promise((r) => setTimeout(r, 20));
  holder?.kill();
  const line = server.stderr().split('\n').filter((l) => l.startsWith('loop-delay ')).at(-1)!;
  const { p99 } = JSON.parse(line.slice('loop-delay '.length)) as { p99: number };
  return { p99, healthzMaxMs: Math.round(healthzMaxMs), creates };
}

/** Event-loop delay p99 of the server with a lock holder beside it, against none. */
export async function lockHealthz(s: Settings): Promise<Figure> {
  const tmp = tempDir('lock');
  const db = join(tmp.dir, 'db');
  const server = await startServe(['--store', `sqlite:${db}`, '--insecure-http', '--log-level', 'warn'], {
    env: { TEAMKEYS_ADMIN_KEY: adminKey, NODE_OPTIONS: `--import=${join(root, 'bench/loop-delay.mjs')}` },
  });
  try {
    await fetch(`${server.url}/apis/management.service/v1/teams`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'existing' } }) });
    const quiet = await phase(server, s, undefined);
    const locked = await phase(server, s, db);
    return figure({
      name: 'lock.healthz',
      value: locked.p99,
      unit: 'ms event-loop delay p99',
      anchor: 'the same p99 with no other process taking the lock',
      anchorValue: quiet.p99,
      target: 2,
      better: 'lower',
      notes: `autocannon GET, 10 connections, and one create every 100 ms, for ${s.seconds} s; another process holds the write lock 1 s of every 1.3 s; /healthz slowest answer ${locked.healthzMaxMs} ms (${quiet.healthzMaxMs} ms without); creates acknowledged ${locked.creates} (${quiet.creates} without)`,
    });
  } finally {
    await server.stop();
    tmp.cleanup();
  }
}
