/**
 * npm run bench [-- --quick]: every figure beside its anchor, in one run, written to
 * bench/results/latest.json and latest.md. Ratios, not absolute times, are what compare across runs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { apiCreates, apiReads, applyNew, memory, planNoop, watchFanout } from './figures.js';
import { apply300, cliStart, credentialStart } from './figures-cli.js';
import { lockHealthz } from './figures-worker.js';
import { accessReview } from './figures-review.js';
import { policy5mb } from './figures-policy.js';
import { scaleSweep } from './figures-scale.js';
import { scaleMillion } from './figures-million.js';
import { federationExchange } from './figures-federation.js';
import { met, type Figure, type Settings } from './lib.js';

const quick = process.argv.includes('--quick');
const settings: Settings = { quick, seconds: quick ? 2 : 10, connections: 50 };
const scaleSizes = (process.argv.find((a) => a.startsWith('--scale-sizes='))?.slice('--scale-sizes='.length) ?? (quick ? '1000,10000' : '1000,10000,100000')).split(',').map(Number);
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const steps: [string, () => Promise<Figure | Figure[]>][] = [
  ['api.get,api.get.member,api.list,api.get.least-work', () => apiReads(settings)],
  ['api.create,api.create.sqlite', () => apiCreates(settings)],
  ['plan.noop10k', () => planNoop(settings)],
  ['apply.1k', () => applyNew(settings)],
  ['cli.start', () => cliStart(settings)],
  ['cli.credential', () => credentialStart(settings)],
  ['apply.300', () => apply300()],
  ['memory.100k', () => memory(settings)],
  ['review.100k,review.100k.peak', () => accessReview(settings)],
  ['watch.fanout500', () => watchFanout(settings)],
  ['lock.healthz', () => lockHealthz(settings)],
  ['policy.5mb', () => policy5mb(settings)],
  ['scale.sweep', () => scaleSweep(settings, scaleSizes)],
  ['federation.exchange', () => federationExchange(settings)],
];
// Opt-in only (--only=scale.million): a million-key fill takes the better part of half an hour.
if (only?.includes('scale.million')) steps.push(['scale.million', () => scaleMillion(settings)]);

const figures: Figure[] = [];
for (const [names, step] of steps) {
  if (only && !names.split(',').some((n) => only.includes(n))) continue;
  const started = performance.now();
  process.stderr.write(`bench: ${names}...`);
  const result = await step();
  figures.push(...(Array.isArray(result) ? result : [result]));
  process.stderr.write(` ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

const table = [
  `Run ${new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')}${quick ? ' (quick: smaller counts, shorter runs)' : ''} on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}.`,
  '',
  '| figure | value | anchor | anchor value | ratio | target | met |',
  '|---|---|---|---|---|---|---|',
  ...figures.map(
    (f) =>
      `| \`${f.name}\` | ${f.value} ${f.unit} | ${f.anchor} | ${f.anchorValue} | ${f.ratio} | ${f.targetOn === 'value' ? `${f.better === 'lower' ? '≤' : '≥'} ${f.target} ${f.unit}` : `${f.better === 'lower' ? '≤' : '≥'} ${f.target}×`} | ${met(f) ? 'yes' : 'no'} |`,
  ),
  '',
  ...figures.filter((f) => f.notes).map((f) => `- \`${f.name}\`: ${f.notes}`),
  '',
].join('\n');

const dir = join(new URL('.', import.meta.url).pathname, 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'latest.json'), `${JSON.stringify({ quick, generatedAt: new Date().toISOString(), figures }, null, 2)}\n`);
writeFileSync(join(dir, 'latest.md'), table);
process.stdout.write(table);
