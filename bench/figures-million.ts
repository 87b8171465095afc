/**
 * scale.million (opt-in: `npm run bench -- --only=scale.million`; it takes the better part of half
 * an hour): 1,000,000 OwnedAccessKeys and 100,000 Teams filled through the store's own write path
 * (scale-measure.ts: the registry over the worker-thread SQLite store, group commit), then a
 * server started on the filled file in a process of its own and measured (in turns with the
 * 10,000-key server, both served at once: measureTogether): RSS once ready, start
 * (the process spawned) to ready (the watch cache filled), and p50/p99 of key create, key delete
 * with an owner, GET, LIST page of 500, sign-in's mint and one watch event's fan-out to 50
 * watchers. The anchor of each is the same figure at 10,000 keys, filled and served the same way
 * in the same run. SCALE_MILLION_KEYS sets the large size (to try the figure smaller);
 * SCALE_MILLION_MAX_FILL_S gives up a fill projected past it (default 1,500 s).
 */
import { figure, type Figure, type Settings } from './lib.js';
import { fillAndMeasure, metrics, type Served } from './scale-measure.js';
import { sizeName } from './figures-scale.js';

interface Run { n: number; fillS: number; startToReadyS: number; served: Served }

export async function scaleMillion(s: Settings): Promise<Figure[]> {
  const count = s.quick ? 50 : 200;
  const large = Number(process.env.SCALE_MILLION_KEYS ?? 1_000_000);
  const maxFillS = Number(process.env.SCALE_MILLION_MAX_FILL_S ?? 1500);
  // The server's first minute after ready is its startup work (the collector's full pass, the key
  // health sweep over every key, since every fixture key expires within a day): timed after it.
  const measured = await fillAndMeasure([10_000, large], count, { settleS: Number(process.env.SCALE_SETTLE_S ?? 60), dirPrefix: 'million', maxFillS });
  const [base, big] = measured.map((r): Run => ({ n: r.n, fillS: r.fillS, startToReadyS: (r.readyAt - r.spawnedAt) / 1000, served: r })) as [Run, Run];
  const row = (r: Run) => `${r.n} keys: ${metrics.map((m) => `${m} ${r.served.timings[m].p50}/${r.served.timings[m].p99}`).join(', ')} ms (p50/p99); filled in ${r.fillS.toFixed(0)} s; start to ready ${r.startToReadyS.toFixed(1)} s (cache ${r.served.readyS.toFixed(1)} s); RSS ${r.served.rss} MiB ready, ${r.served.peak} MiB peak`;
  const anchor = `the same at ${base.n} keys, same run`;
  const name = sizeName(large);
  return [
    ...metrics.map((m, i) =>
      figure({
        name: `scale.million.${m}.${name}`,
        value: big.served.timings[m].p50,
        unit: 'ms (p50)',
        anchor,
        anchorValue: base.served.timings[m].p50,
        target: 1.2,
        better: 'lower',
        ...(i === 0 ? { notes: `${count} sequential requests each (fan-out: ${Math.min(count, 100)} writes), a fresh server process per size on its filled SQLite file, both served at once and timed in turns, from ${process.env.SCALE_SETTLE_S ?? 60} s after ready. ${row(base)}. ${row(big)}.` } : {}),
      }),
    ),
    figure({ name: `scale.million.rss.${name}`, value: big.served.rss, unit: 'MiB', anchor, anchorValue: base.served.rss, target: 2560, targetOn: 'value', better: 'lower' }),
    figure({ name: `scale.million.ready.${name}`, value: Number(big.startToReadyS.toFixed(1)), unit: 's', anchor, anchorValue: Number(base.startToReadyS.toFixed(1)), target: 60, targetOn: 'value', better: 'lower' }),
  ];
}
