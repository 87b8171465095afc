// A mutation score from a random sample of the mutants, for when testing every mutant takes longer
// than there is (src/auth and src/registry: about ten hours on two cores). docs/mutation-testing.md
// says how it is used and what it cannot tell.
//
//   npx tsx scripts/mutation-sample.mjs pick PLAN --seed 7 --take auth=260,registry=200 [--skip-file F]...
//     PLAN is a run's reports/mutation/events/00001-onMutationTestingPlanReady.json (a run stopped
//     after its dry run is enough). Writes reports/mutation/sample.json (the mutants picked) and
//     prints the `--mutate` argument that makes Stryker test those (and any mutant nested inside
//     one of them, which the score ignores).
//   npx tsx scripts/mutation-sample.mjs run --seed 7 --take auth=240,registry=180,gitops=60 --statics 12
//     (`npm run test:mutation:sample -- ...`) all of it: a whole run stopped once its plan is written,
//     the pick, the run of the picked mutants (STRYKER_SAMPLE: scripts/mutation-sample-checker.mjs
//     turns the others away) and the score.
//   npx tsx scripts/mutation-sample.mjs score EVENTS_DIR
//     Matches the sample run's onMutantTested events to the mutants picked and prints each folder's
//     score with its 95% (Wilson) interval, and every survivor.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
// The tests' generator: a seed draws the same sample again.
import { seededRandom } from '../test/support/seeded-random.ts';
import { fileOf, keyOf } from './mutation-keys.mjs';

const samplePath = 'reports/mutation/sample.json';

const folderOf = (file) => file.split('/')[1];

function options(args) {
  const out = { take: {}, skipFiles: [], seed: 1, statics: 0 };
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--seed') out.seed = Number(args[++i]);
    else if (args[i] === '--take') for (const part of args[++i].split(',')) { const [k, v] = part.split('='); out.take[k] = Number(v); }
    else if (args[i] === '--skip-file') out.skipFiles.push(args[++i]);
    else if (args[i] === '--statics') out.statics = Number(args[++i]);
    else out.positional = args[i];
  }
  return out;
}

function pick(args) {
  const o = options(args);
  const { mutantPlans } = JSON.parse(readFileSync(o.positional, 'utf8'));
  const next = seededRandom(o.seed);
  const byFolder = {};
  const statics = {};
  for (const p of mutantPlans) {
    const m = p.mutant;
    const file = fileOf(m);
    const folder = folderOf(file);
    if (!(folder in o.take) || o.skipFiles.includes(file)) continue;
    // A static mutant runs every test (minutes each): sampled apart, `--statics` of them from all folders.
    if (m.static) { statics[folder] = (statics[folder] ?? 0) + 1; (byFolder.static ??= []).push(m); continue; }
    (byFolder[folder] ??= []).push(m);
  }
  const picked = [];
  for (const [folder, n] of [...Object.entries(o.take), ['static', o.statics]]) {
    const pool = byFolder[folder] ?? [];
    // A partial Fisher-Yates shuffle: the first n of a uniform permutation.
    for (let i = 0; i < Math.min(n, pool.length); i++) {
      const j = i + Math.floor(next() * (pool.length - i));
      [pool[i], pool[j]] = [pool[j], pool[i]];
      picked.push({ folder, key: keyOf(pool[i], 1), file: fileOf(pool[i]), location: pool[i].location });
    }
  }
  const population = Object.fromEntries(Object.entries(byFolder).map(([f, ms]) => [f, ms.length]));
  o.take.static = o.statics;
  mkdirSync('reports/mutation', { recursive: true });
  writeFileSync(samplePath, JSON.stringify({ seed: o.seed, take: o.take, skipFiles: o.skipFiles, population, statics, picked }, null, 1));
  // A --mutate range is 1-based lines and 0-based columns (Stryker's project reader).
  const range = ({ file, location: { start, end } }) => `${file}:${start.line + 1}:${start.column}-${end.line + 1}:${end.column}`;
  process.stderr.write(`picked ${picked.length} of ${JSON.stringify(population)} (of them static: ${JSON.stringify(statics)}); wrote ${samplePath}\n`);
  return picked.map(range).join(',');
}

/** The 95% Wilson score interval of k successes in n. */
function wilson(k, n) {
  if (n === 0) return [0, 1];
  const z = 1.96, p = k / n, d = 1 + (z * z) / n;
  const c = p + (z * z) / (2 * n), r = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return [(c - r) / d, (c + r) / d];
}

function score([dir]) {
  const sample = JSON.parse(readFileSync(samplePath, 'utf8'));
  const results = new Map();
  for (const f of readdirSync(dir).filter((n) => n.endsWith('-onMutantTested.json'))) {
    const m = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    results.set(keyOf(m), m.status);
  }
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  const lines = [];
  const survivors = [];
  const strata = {};
  for (const folder of Object.keys(sample.take).filter((f) => sample.take[f] > 0)) {
    const mine = sample.picked.filter((p) => p.folder === folder);
    const counts = {};
    for (const p of mine) {
      const status = results.get(p.key) ?? 'NotTested';
      counts[status] = (counts[status] ?? 0) + 1;
      if (status === 'Survived' || status === 'NoCoverage') survivors.push(`${status.padEnd(10)} ${p.key}`);
    }
    const detected = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
    const tested = mine.length - (counts.NotTested ?? 0) - (counts.CompileError ?? 0) - (counts.RuntimeError ?? 0);
    const [lo, hi] = wilson(detected, tested);
    if (tested > 0) strata[folder] = { population: sample.population[folder] ?? 0, p: detected / tested, n: tested };
    lines.push(`${folder}: ${detected} of ${tested} detected, ${pct(detected / Math.max(tested, 1))} (95%: ${pct(lo)} to ${pct(hi)}) of ${sample.population[folder]} mutants; ${JSON.stringify(counts)}`);
  }
  // All folders together: each stratum's rate weighted by its population (a stratified estimate),
  // with the normal approximation of its 95% interval.
  const total = Object.values(strata).reduce((a, s) => a + s.population, 0);
  const rate = Object.values(strata).reduce((a, s) => a + (s.population / total) * s.p, 0);
  const sd = Math.sqrt(Object.values(strata).reduce((a, s) => a + (s.population / total) ** 2 * (s.p * (1 - s.p)) / Math.max(s.n - 1, 1), 0));
  lines.push(`all ${total} mutants (stratified): ${pct(rate)} (95%: ${pct(rate - 1.96 * sd)} to ${pct(rate + 1.96 * sd)})`);
  process.stdout.write(`${lines.join('\n')}\n\n${survivors.sort().join('\n')}\n`);
}

const events = 'reports/mutation/events';
const strykerBin = 'node_modules/@stryker-mutator/core/bin/stryker.js';

/** Runs Stryker in its own process group; `until` may end it early (with every runner it started). */
function stryker(args, env, until) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [strykerBin, 'run', 'stryker.config.mjs', ...args], { stdio: 'inherit', detached: true, env: { ...process.env, ...env } });
    let stopped = false;
    const timer = until && setInterval(() => {
      if (stopped || !until()) return;
      stopped = true;
      process.kill(-child.pid, 'SIGTERM');
    }, 1_000);
    child.on('error', fail);
    child.on('exit', (code, signal) => {
      if (timer) clearInterval(timer);
      if (code === 0 || stopped) done();
      else fail(new Error(`stryker ended with ${code ?? signal}`));
    });
  });
}

async function run(args) {
  rmSync(events, { recursive: true, force: true });
  // The plan is written after the dry run, and may still be being written when the first
  // mutant's result is (it is large): it is there once it parses.
  const written = join(events, '00001-onMutationTestingPlanReady.json');
  const whole = () => {
    if (!existsSync(join(events, '00002-onMutantTested.json'))) return false;
    try {
      JSON.parse(readFileSync(written, 'utf8'));
      return true;
    } catch {
      return false;
    }
  };
  await stryker([], {}, whole);
  const plan = 'reports/mutation/plan.json';
  copyFileSync(written, plan);
  const ranges = pick([plan, ...args]);
  rmSync(events, { recursive: true, force: true });
  await stryker(['--mutate', ranges], { STRYKER_SAMPLE: resolve(samplePath) });
  score([events]);
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'pick') process.stdout.write(pick(rest));
else if (command === 'score') score(rest);
else if (command === 'run') await run(rest);
else {
  process.stderr.write('usage: mutation-sample.mjs run|pick PLAN --seed N --take folder=n,... [--statics N] | score EVENTS_DIR\n');
  process.exit(2);
}
