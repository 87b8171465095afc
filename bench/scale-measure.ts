/**
 * The size sweep's two halves: fill a SQLite file through the store's own write path, then serve
 * it behind the watch cache and time requests. Each size is served by a process of its own (this
 * file as a script: `tsx bench/scale-measure.ts FILE N SETTLE_S`), so that RSS, start to ready and
 * the timings are the server's alone, with nothing the bench ran before in the same heap; and all
 * the sizes of a run are served at once and timed in turns (`measureTogether`), one request of each
 * size after the other, so that the machine's slow minutes fall on every size alike rather than on
 * whichever size was being measured then (scale.sweep and scale.million both measure so).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { createRegistry, type Registry } from '../src/registry/registry.js';
import { SqliteStore } from '../src/store/backends/sqlite.js';
import { CachedStore } from '../src/store/cache/cached-store.js';
import { mintLoginKey } from '../src/signin/mint.js';
import { bootstrapAdmin } from '../src/auth/bootstrap.js';
import { adminHeaders, adminKey, startInProcess, type InProcess } from '../test/support/in-process.js';
import { onWatchEvents, percentile, rssMiB, tempDir } from './lib.js';

export type Metric = 'create' | 'delete' | 'get' | 'list500' | 'mint' | 'fanout';
export const metrics: Metric[] = ['create', 'delete', 'get', 'list500', 'mint', 'fanout'];
export const pad = (i: number) => String(i).padStart(7, '0');
export interface Timing { p50: number; p99: number }
/**
 * rss: MiB resident once the cache is ready; peak: the most resident (VmHWM) by the end of the
 * measurement; readyAt - spawnedAt: the process's start to ready.
 */
export interface Served { timings: Record<Metric, Timing>; readyS: number; readyAt: number; spawnedAt: number; rss: number; peak: number }

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
async function fill(path: string, n: number, maxSeconds = Infinity): Promise<number> {
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

/** p50 and p99 of a metric's timed calls. */
function timing(ms: number[]): Timing {
  return { p50: Number(percentile(ms, 50).toFixed(2)), p99: Number(percentile(ms, 99).toFixed(2)) };
}

/** Watchers of one key (the administrator's key allows 100 watches; 50 here). */
const watchers = 50;

/** Untimed calls before the timed ones (the first calls of a fresh process pay for compiling the code). */
const warmCalls = (m: Metric) => (m === 'fanout' ? 5 : 20);
/** Timed calls of a metric when `count` are asked (a fan-out is 50 watchers' worth of events). */
const timedCalls = (m: Metric, count: number) => (m === 'fanout' ? Math.min(count, 100) : count);

/** Calls of one size in a turn, back to back, before the next size's turn. */
const turnCalls = 10;

/** 50 watchers of key-0000000, opened from the list's revision; `write(i)` patches the key and waits until all saw it. */
async function openFanout(server: InProcess): Promise<{ write(i: number): Promise<void>; close(): void }> {
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
  return {
    write: async (i) => {
      const res = await server.fetch(key, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { labels: { write: String(i) } } }) });
      const written = ((await res.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      const deadline = performance.now() + 30_000;
      while ((seen.get(written)?.n ?? 0) < watchers) {
        if (performance.now() > deadline) throw new Error(`scale: ${seen.get(written)?.n ?? 0} of ${watchers} watchers saw revision ${written}`);
        await new Promise((r) => setImmediate(r));
      }
    },
    close: () => {
      for (const r of requests) r.destroy();
    },
  };
}

/** The process's peak resident set (VmHWM), MiB. */
function peakMiB(): number {
  const kb = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return Number((Number(kb ?? NaN) / 1024).toFixed(1));
}

/** One call of each metric against the server (the i-th: each call names its own key). */
function callsOf(server: InProcess, n: number): Record<Exclude<Metric, 'fanout'>, (i: number) => Promise<unknown>> {
  const ok = async (res: Promise<Response>) => {
    const r = await res;
    if (!r.ok) throw new Error(`scale: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
  };
  const json = { 'Content-Type': 'application/json' };
  return {
    create: (i) => ok(server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: `new-${pad(i)}` }, spec: { user: `new-u${i}`, ttl: 86400 } }) })),
    delete: (i) => ok(server.fetch(`${server.api}/ownedaccesskeys/key-${pad(2 * i + 1)}`, { method: 'DELETE' })),
    get: (i) => ok(server.fetch(`${server.api}/ownedaccesskeys/key-${pad((2 * i + 2) % n)}`)),
    list500: () => ok(server.fetch(`${server.api}/ownedaccesskeys?limit=500`)),
    mint: (i) => mintLoginKey(server.registry, { username: `sso-u${i}`, identity: { connector: 'bench', userId: `id${i}` }, ttlSeconds: 3600, requester: { username: 'bench' }, via: 'bench', unprefixed: true }, new Date()),
  };
}

/**
 * The script's side: serves the filled file in-process behind the watch cache, says when it is
 * ready and when `settleS` have passed since, then does what each line it reads asks
 * (`<metric> <first i> <calls>`: that many calls back to back, timed; `open fanout`, `close
 * fanout`, `end`), answering one JSON line each.
 */
async function serveAndTime(path: string, n: number, settleS: number): Promise<void> {
  const say = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);
  const started = performance.now();
  const cache = new CachedStore(new SqliteStore(path, { threads: true }));
  // As teamkeys serve: the lease and the key health sweep wait for the cache's fill.
  const server = await startInProcess({ store: cache, synced: () => cache.ready(600_000) });
  await cache.ready(600_000);
  say({ readyS: (performance.now() - started) / 1000, readyAt: Date.now(), rss: rssMiB(process.pid) });
  // Seconds to wait after ready before timing: the server's startup work (the first key health
  // sweep and the collector's first full pass, over every key) is not a request's.
  await new Promise((r) => setTimeout(r, settleS * 1000));
  say({ settled: true });
  const calls = callsOf(server, n);
  let fanout: Awaited<ReturnType<typeof openFanout>> | undefined;
  for await (const line of createInterface({ input: process.stdin })) {
    const [what, arg, k] = line.split(' ');
    if (what === 'end') break;
    if (what === 'open') fanout = await openFanout(server);
    else if (what === 'close') fanout?.close();
    else {
      const call = what === 'fanout' ? (j: number) => fanout!.write(j) : calls[what as Exclude<Metric, 'fanout'>];
      const ms: number[] = [];
      for (let i = Number(arg); i < Number(arg) + Number(k); i++) {
        const t = performance.now();
        await call(i);
        ms.push(performance.now() - t);
      }
      say({ ms });
      continue;
    }
    say({ ok: true });
  }
  say({ peak: peakMiB() });
  await server.close();
}

/** A size's server process, answering one line per line sent. */
class ServedApart {
  private readonly replies: AsyncIterator<string>;
  private constructor(
    readonly child: ChildProcessByStdio<Writable, Readable, null>,
    readonly n: number,
    readonly spawnedAt: number,
  ) {
    this.replies = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  }

  static start(path: string, n: number, settleS: number): ServedApart {
    const spawnedAt = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, path, String(n), String(settleS)], { stdio: ['pipe', 'pipe', 'inherit'] });
    return new ServedApart(child, n, spawnedAt);
  }

  /** The next JSON line the process prints (lines that are not JSON are someone else's output). */
  async next<T>(): Promise<T> {
    for (;;) {
      const { value, done } = await this.replies.next();
      if (done) throw new Error(`scale: the server process for ${this.n} keys ended (exit ${this.child.exitCode})`);
      if (value.startsWith('{')) return JSON.parse(value) as T;
    }
  }

  async ask<T>(line: string): Promise<T> {
    this.child.stdin.write(`${line}\n`);
    return this.next<T>();
  }

  async end(): Promise<number> {
    const { peak } = await this.ask<{ peak: number }>('end');
    this.child.stdin.end();
    await new Promise((r) => (this.child.exitCode !== null ? r(null) : this.child.once('exit', r)));
    return peak;
  }
}

/**
 * Serves each filled file from a process of its own, all at once, and times `count` calls of every
 * metric per size in turns: ten calls of each size, the sizes in an order that rotates each turn,
 * then the next ten. Timing starts once every process is `settleS` past its own ready.
 */
async function measureTogether(files: { path: string; n: number }[], count: number, settleS: number): Promise<Map<number, Served>> {
  const servers = files.map((f) => ServedApart.start(f.path, f.n, settleS));
  try {
    const ready = await Promise.all(servers.map((s) => s.next<{ readyS: number; readyAt: number; rss: number }>()));
    await Promise.all(servers.map((s) => s.next<{ settled: true }>()));
    const ms = servers.map(() => new Map<Metric, number[]>(metrics.map((m) => [m, []])));
    for (const m of metrics) {
      if (m === 'fanout') await Promise.all(servers.map((s) => s.ask('open fanout')));
      const warm = warmCalls(m);
      const total = warm + timedCalls(m, count);
      // A turn is a few calls back to back: single calls between idle pauses measured the
      // machine's wake-up (a GET at 1.3-1.9 ms, against 0.6 back to back), not the request.
      for (let first = 0, turn = 0; first < total; first += turnCalls, turn++) {
        const calls = Math.min(turnCalls, total - first);
        for (let k = 0; k < servers.length; k++) {
          const at = (turn + k) % servers.length;
          const { ms: took } = await servers[at]!.ask<{ ms: number[] }>(`${m} ${first} ${calls}`);
          took.forEach((t, j) => first + j >= warm && ms[at]!.get(m)!.push(t));
        }
      }
      if (m === 'fanout') await Promise.all(servers.map((s) => s.ask('close fanout')));
    }
    const out = new Map<number, Served>();
    for (const [k, s] of servers.entries()) {
      const timings = Object.fromEntries(metrics.map((m) => [m, timing(ms[k]!.get(m)!)])) as Record<Metric, Timing>;
      out.set(s.n, { timings, ...ready[k]!, spawnedAt: s.spawnedAt, peak: await s.end() });
    }
    return out;
  } finally {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill();
  }
}

/**
 * The sweep's whole measurement, for scale.sweep and scale.million alike: a file filled per size
 * (one after the other; `maxFillS` as `fill`'s), then all served at once and timed in turns
 * (measureTogether); the files go afterwards.
 */
export async function fillAndMeasure(sizes: number[], count: number, opts: { settleS: number; dirPrefix: string; maxFillS?: number }): Promise<(Served & { n: number; fillS: number })[]> {
  const dirs = sizes.map((n) => ({ n, ...tempDir(`${opts.dirPrefix}-${n}`) }));
  try {
    const files: { n: number; path: string; fillS: number }[] = [];
    for (const { n, dir } of dirs) {
      const path = join(dir, 'store.db');
      files.push({ n, path, fillS: await fill(path, n, opts.maxFillS) });
      process.stderr.write(` ${n} keys filled;`);
    }
    const served = await measureTogether(files, count, opts.settleS);
    return files.map(({ n, fillS }) => ({ ...served.get(n)!, n, fillS }));
  } finally {
    for (const d of dirs) d.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [path, n, settleS] = process.argv.slice(2);
  await serveAndTime(path!, Number(n), Number(settleS ?? 0));
  process.exit(0);
}
