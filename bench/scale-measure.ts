/**
 * The size sweep's two halves: fill a SQLite file through the store's own write path, then serve
 * it behind the watch cache and time requests. Run as a script (`tsx bench/scale-measure.ts FILE
 * N COUNT SETTLE_S`, which measureApart does), it measures in a process of its own and prints one JSON line,
 * so that RSS, start to ready and the timings are the server's alone, with nothing the bench ran
 * before in the same heap (scale.sweep and scale.million both measure so).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { pathToFileURL } from 'node:url';
import { createRegistry, type Registry } from '../src/registry/registry.js';
import { SqliteStore } from '../src/store/backends/sqlite.js';
import { CachedStore } from '../src/store/cache/cached-store.js';
import { mintLoginKey } from '../src/signin/mint.js';
import { bootstrapAdmin } from '../src/auth/bootstrap.js';
import { adminHeaders, adminKey, startInProcess, type InProcess } from '../test/support/in-process.js';
import { onWatchEvents, percentile, rssMiB } from './lib.js';

export type Metric = 'create' | 'delete' | 'get' | 'list500' | 'mint' | 'fanout';
export const metrics: Metric[] = ['create', 'delete', 'get', 'list500', 'mint', 'fanout'];
export const pad = (i: number) => String(i).padStart(7, '0');
export interface Timing { p50: number; p99: number }
/** rss: MiB resident once the cache is ready; peak: the most resident (VmHWM) by the end of the measurement. */
export interface Served { timings: Record<Metric, Timing>; readyS: number; readyAt: number; rss: number; peak: number }

/** Runs `fn(i)` for i in [0, n) with `width` in flight. */
async function inFlight(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await fn(next++);
  }));
}

/**
 * n keys and n/10 teams, half user keys (5 per user) and half team keys (bound to their team by an
 * ownerReference), 64 writes in flight so group commit batches them. Gives up (throws) once the
 * keys written so far project the whole fill past `maxSeconds`.
 */
export async function fill(path: string, n: number, maxSeconds = Infinity): Promise<number> {
  const started = performance.now();
  const store = new SqliteStore(path, { threads: true });
  const registry: Registry = createRegistry(store);
  try {
    // The in-process server's administrator, as it would bootstrap itself on an empty store.
    await bootstrapAdmin(registry, { adminKey, keyFile: '/dev/null' });
    const teams = Math.max(10, n / 10);
    const opts = { fieldManager: 'bench' };
    const total = teams + n;
    // The projection counts from the 20,000th write on: the first ones pay for compiling the code.
    let mark: { done: number; at: number } | undefined;
    const check = (done: number) => {
      if (done % 10_000 !== 0) return;
      const now = performance.now();
      const spent = (now - started) / 1000;
      process.stderr.write(` ${done}/${total} in ${spent.toFixed(0)} s;`);
      if (done === 20_000) mark = { done, at: now };
      else if (mark && done >= 50_000) {
        const projected = spent + ((total - done) * (now - mark.at)) / (done - mark.done) / 1000;
        if (projected > maxSeconds) throw new Error(`fill of ${n} keys given up: ${done} writes took ${spent.toFixed(0)} s, projecting ${projected.toFixed(0)} s, past ${maxSeconds} s`);
      }
    };
    await inFlight(teams, 64, async (i) => {
      await registry.teams.create({ metadata: { name: `team-${pad(i)}` }, spec: { displayName: `Team ${i}`, users: [`u${i}`] } }, opts);
      check(i + 1);
    });
    await inFlight(n, 64, async (i) => {
      await registry.ownedaccesskeys.create({ metadata: { name: `key-${pad(i)}` }, spec: i % 2 ? { team: `team-${pad(i % teams)}`, ttl: 86400 } : { user: `u${i % teams}`, ttl: 86400 } }, opts);
      check(teams + i + 1);
    });
  } finally {
    await store.close();
  }
  return (performance.now() - started) / 1000;
}

/** p50 and p99 of `count` sequential calls, after `warm` untimed ones (the first calls of a fresh process pay for compiling the code). */
async function timed(count: number, fn: (i: number) => Promise<unknown>, warm = 20): Promise<Timing> {
  const ms: number[] = [];
  for (let i = 0; i < warm + count; i++) {
    const t = performance.now();
    await fn(i);
    if (i >= warm) ms.push(performance.now() - t);
  }
  return { p50: Number(percentile(ms, 50).toFixed(2)), p99: Number(percentile(ms, 99).toFixed(2)) };
}

/** Watchers of one key (the administrator's key allows 100 watches; 50 here). */
const watchers = 50;

/** Per write: from sending a patch of key-0000000 to the last of `watchers` watchers reading its event. */
async function fanout(server: InProcess, count: number): Promise<Timing> {
  const key = `${server.api}/ownedaccesskeys/key-${pad(0)}`;
  // From the list's revision, the current one: the key's own may be further back than a watch replays.
  const rv = ((await (await server.fetch(`${server.api}/ownedaccesskeys?limit=1`)).json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const seen = new Map<string, { n: number; last: number }>();
  const requests: ReturnType<typeof request>[] = [];
  await Promise.all(Array.from({ length: watchers }, () => new Promise<void>((resolve, reject) => {
    const req = request(`${server.api}/ownedaccesskeys?watch=true&fieldSelector=metadata.name%3Dkey-${pad(0)}&resourceVersion=${rv}`, { headers: adminHeaders, agent: false }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`scale: watch answered ${res.statusCode}`));
      onWatchEvents(res, (rv) => {
        const s = seen.get(rv) ?? { n: 0, last: 0 };
        s.n++;
        s.last = performance.now();
        seen.set(rv, s);
      });
      resolve();
    });
    req.on('error', () => {});
    req.end();
    requests.push(req);
  })));
  try {
    return await timed(count, async (i) => {
      const res = await server.fetch(key, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { labels: { write: String(i) } } }) });
      const written = ((await res.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      const deadline = performance.now() + 30_000;
      while ((seen.get(written)?.n ?? 0) < watchers) {
        if (performance.now() > deadline) throw new Error(`scale: ${seen.get(written)?.n ?? 0} of ${watchers} watchers saw revision ${written}`);
        await new Promise((r) => setImmediate(r));
      }
    }, 5);
  } finally {
    for (const r of requests) r.destroy();
  }
}

/** The process's peak resident set (VmHWM), MiB. */
function peakMiB(): number {
  const kb = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return Number((Number(kb ?? NaN) / 1024).toFixed(1));
}

/** Serves the filled file in-process behind the watch cache and times `count` requests per metric. */
export async function measureServed(path: string, n: number, count: number, settleS: number): Promise<Served> {
  const started = performance.now();
  const cache = new CachedStore(new SqliteStore(path, { threads: true }));
  // As teamkeys serve: the lease and the key health sweep wait for the cache's fill.
  const server = await startInProcess({ store: cache, synced: () => cache.ready(600_000) });
  await cache.ready(600_000);
  const readyS = (performance.now() - started) / 1000;
  const readyAt = Date.now();
  const rss = rssMiB(process.pid);
  // Seconds to wait after ready before timing: the server's startup work (the first key health
  // sweep and the collector's first full pass, over every key) is not a request's.
  await new Promise((r) => setTimeout(r, settleS * 1000));
  const ok = async (res: Promise<Response>) => {
    const r = await res;
    if (!r.ok) throw new Error(`scale: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
  };
  const json = { 'Content-Type': 'application/json' };
  try {
    const timings: Record<Metric, Timing> = {
      create: await timed(count, (i) => ok(server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: `new-${pad(i)}` }, spec: { user: `new-u${i}`, ttl: 86400 } }) }))),
      delete: await timed(count, (i) => ok(server.fetch(`${server.api}/ownedaccesskeys/key-${pad(2 * i + 1)}`, { method: 'DELETE' }))),
      get: await timed(count, (i) => ok(server.fetch(`${server.api}/ownedaccesskeys/key-${pad((2 * i + 2) % n)}`))),
      list500: await timed(count, () => ok(server.fetch(`${server.api}/ownedaccesskeys?limit=500`))),
      mint: await timed(count, (i) =>
        mintLoginKey(server.registry, { username: `sso-u${i}`, identity: { connector: 'bench', userId: `id${i}` }, ttlSeconds: 3600, requester: { username: 'bench' }, via: 'bench', unprefixed: true }, new Date()),
      ),
      fanout: await fanout(server, Math.min(count, 100)),
    };
    return { timings, readyS, readyAt, rss, peak: peakMiB() };
  } finally {
    await server.close();
  }
}

/**
 * measureServed in a process of its own (this file as a script), timing from `settleS` after ready;
 * spawnedAt is when the process was started (start to ready = readyAt - spawnedAt).
 */
export async function measureApart(path: string, n: number, count: number, settleS: number): Promise<Served & { spawnedAt: number }> {
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, path, String(n), String(count), String(settleS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`scale: the server process for ${n} keys exited with ${code}`);
  return { ...(JSON.parse(out.trim().split('\n').at(-1)!) as Served), spawnedAt };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [path, n, count, settleS] = process.argv.slice(2);
  const served = await measureServed(path!, Number(n), Number(count), Number(settleS ?? 0));
  process.stdout.write(`${JSON.stringify(served)}\n`);
  process.exit(0);
}
