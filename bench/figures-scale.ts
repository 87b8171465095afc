/**
 * scale.sweep: what one request costs as the fleet grows. For each size (1k, 10k, 100k keys, and
 * 1M with --scale-sizes=...,1000000), a SQLite file is filled through the store's own write path
 * (the registry over the worker-thread store, 64 writes in flight, so group commit batches them),
 * then served in-process behind the watch cache and measured: p50 of key create, key delete (a
 * team key, which has an owner), GET, LIST page of 500, and sign-in's mint (both username checks
 * and the quota: mintLoginKey, unprefixed). Each figure's anchor is the same figure at the
 * smallest size of the same run; the target is at most 1.2x, the issue's flat-cost bound.
 */
import { join } from 'node:path';
import { createRegistry, type Registry } from '../src/registry/registry.js';
import { SqliteStore } from '../src/store/backends/sqlite.js';
import { CachedStore } from '../src/store/cache/cached-store.js';
import { mintLoginKey } from '../src/signin/mint.js';
import { bootstrapAdmin } from '../src/auth/bootstrap.js';
import { adminKey, startInProcess } from '../test/support/in-process.js';
import { figure, percentile, rssMiB, tempDir, type Figure, type Settings } from './lib.js';

type Metric = 'create' | 'delete' | 'get' | 'list500' | 'mint';
const metrics: Metric[] = ['create', 'delete', 'get', 'list500', 'mint'];
const pad = (i: number) => String(i).padStart(7, '0');

/** Runs `fn(i)` for i in [0, n) with `width` in flight. */
async function inFlight(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await fn(next++);
  }));
}

/** n keys and n/10 teams, half user keys (5 per user) and half team keys (bound to their team by an ownerReference). */
async function fill(path: string, n: number): Promise<number> {
  const started = performance.now();
  const store = new SqliteStore(path, { threads: true });
  const registry: Registry = createRegistry(store);
  // The in-process server's administrator, as it would bootstrap itself on an empty store.
  await bootstrapAdmin(registry, { adminKey, keyFile: '/dev/null' });
  const teams = Math.max(10, n / 10);
  const opts = { fieldManager: 'bench' };
  await inFlight(teams, 64, (i) => registry.teams.create({ metadata: { name: `team-${pad(i)}` }, spec: { displayName: `Team ${i}`, users: [`u${i}`] } }, opts));
  await inFlight(n, 64, (i) =>
    registry.ownedaccesskeys.create({ metadata: { name: `key-${pad(i)}` }, spec: i % 2 ? { team: `team-${pad(i % teams)}`, ttl: 86400 } : { user: `u${i % teams}`, ttl: 86400 } }, opts),
  );
  await store.close();
  return (performance.now() - started) / 1000;
}

/** p50 of `count` sequential calls, after `warm` untimed ones (the first calls of a fresh process pay for compiling the code). */
async function timed(count: number, fn: (i: number) => Promise<unknown>, warm = 20): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < warm + count; i++) {
    const t = performance.now();
    await fn(i);
    if (i >= warm) ms.push(performance.now() - t);
  }
  return Number(percentile(ms, 50).toFixed(2));
}

async function measure(n: number, count: number): Promise<{ p50: Record<Metric, number>; fillS: number; readyS: number; rss: number }> {
  const { dir, cleanup } = tempDir(`scale-${n}`);
  try {
    const path = join(dir, 'store.db');
    const fillS = await fill(path, n);
    const started = performance.now();
    const cache = new CachedStore(new SqliteStore(path, { threads: true }));
    const server = await startInProcess({ store: cache });
    await cache.ready(600_000);
    const readyS = (performance.now() - started) / 1000;
    const ok = async (res: Promise<Response>) => {
      const r = await res;
      if (!r.ok) throw new Error(`scale.sweep: ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
    };
    const json = { 'Content-Type': 'application/json' };
    const p50: Record<Metric, number> = {
      create: await timed(count, (i) => ok(server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: `new-${pad(i)}` }, spec: { user: `new-u${i}`, ttl: 86400 } }) }))),
      delete: await timed(count, (i) => ok(server.fetch(`${server.api}/ownedaccesskeys/key-${pad(2 * i + 1)}`, { method: 'DELETE' }))),
      get: await timed(count, (i) => ok(server.fetch(`${server.api}/ownedaccesskeys/key-${pad((2 * i + 2) % n)}`))),
      list500: await timed(count, () => ok(server.fetch(`${server.api}/ownedaccesskeys?limit=500`))),
      mint: await timed(count, (i) =>
        mintLoginKey(server.registry, { username: `sso-u${i}`, identity: { connector: 'bench', userId: `id${i}` }, ttlSeconds: 3600, requester: { username: 'bench' }, via: 'bench', unprefixed: true }, new Date()),
      ),
    };
    const rss = rssMiB(process.pid);
    await server.close();
    return { p50, fillS, readyS, rss };
  } finally {
    cleanup();
  }
}

export async function scaleSweep(s: Settings, sizes: number[]): Promise<Figure[]> {
  const count = s.quick ? 50 : 200;
  const runs: { n: number; r: Awaited<ReturnType<typeof measure>> }[] = [];
  for (const n of sizes) {
    runs.push({ n, r: await measure(n, count) });
    process.stderr.write(` ${n} keys done;`);
  }
  const [base, ...rest] = runs;
  const table = runs.map(({ n, r }) => `${n} keys: ${metrics.map((m) => `${m} ${r.p50[m]} ms`).join(', ')}; filled in ${r.fillS.toFixed(1)} s, cache ready ${r.readyS.toFixed(1)} s, RSS ${r.rss} MiB`).join('; ');
  return rest.flatMap(({ n, r }) =>
    metrics.map((m, i) =>
      figure({
        name: `scale.${m}.${n >= 1e6 ? `${n / 1e6}m` : `${n / 1000}k`}`,
        value: r.p50[m],
        unit: 'ms (p50)',
        anchor: `the same at ${base!.n} keys, same run`,
        anchorValue: base!.r.p50[m],
        target: 1.2,
        better: 'lower',
        ...(i === 0 && n === rest.at(-1)!.n ? { notes: `${count} sequential requests each, in-process server over the worker-thread SQLite store behind the watch cache. ${table}` } : {}),
      }),
    ),
  );
}
