/**
 * scale.sweep: what one request costs as the fleet grows. For each size (1k, 10k, 100k keys, and
 * 1M with --scale-sizes=...,1000000), a SQLite file is filled through the store's own write path
 * (the registry over the worker-thread store, 64 writes in flight, so group commit batches them),
 * then served behind the watch cache in a process of its own, all sizes at once, and measured in
 * turns (scale-measure.ts, measureTogether): p50 of key create, key delete (a team key, which has
 * an owner), GET, LIST page of 500, sign-in's mint (both username checks and the quota:
 * mintLoginKey, unprefixed) and one watch event's fan-out to 50 watchers, from 30 s after the cache is ready (as scale.million waits 60 s). Each figure's anchor
 * is the same figure at the smallest size of the same run; the target is at most 1.2x, the issue's
 * flat-cost bound.
 */
import { figure, type Figure, type Settings } from './lib.js';
import { fillAndMeasure, metrics } from './scale-measure.js';

export const sizeName = (n: number) => (n >= 1e6 ? `${n / 1e6}m` : `${n / 1000}k`);

/**
 * Seconds from ready to the first timed request, at every size (SCALE_SETTLE_S sets it; 0 times
 * the requests among the startup work, which at 100,000 keys made creates 2-3x slower than at 1,000).
 */
const settleS = () => Number(process.env.SCALE_SETTLE_S ?? 30);

export async function scaleSweep(s: Settings, sizes: number[]): Promise<Figure[]> {
  const count = s.quick ? 50 : 200;
  const runs = await fillAndMeasure(sizes, count, { settleS: settleS(), dirPrefix: 'scale' });
  const [base, ...rest] = runs;
  const table = runs.map((r) => `${r.n} keys: ${metrics.map((m) => `${m} ${r.timings[m].p50} ms`).join(', ')}; filled in ${r.fillS.toFixed(1)} s, cache ready ${r.readyS.toFixed(1)} s, RSS ${r.rss} MiB`).join('; ');
  return rest.flatMap((r) =>
    metrics.map((m, i) =>
      figure({
        name: `scale.${m}.${sizeName(r.n)}`,
        value: r.timings[m].p50,
        unit: 'ms (p50)',
        anchor: `the same at ${base!.n} keys, same run`,
        anchorValue: base!.timings[m].p50,
        target: 1.2,
        better: 'lower',
        ...(i === 0 && r === rest.at(-1) ? { notes: `${count} sequential requests each, from ${settleS()} s after ready, a server process of its own per size, all served at once and timed in turns (ten requests of each size, then the next size; in-process server, worker-thread SQLite store, watch cache). ${table}` } : {}),
      }),
    ),
  );
}
