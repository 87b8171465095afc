/**
 * `teamkeys access-review` of 10,000 Teams and 100,000 keys (the memory figure's fixture, read from
 * its SQLite store): its time and peak memory beside `teamkeys get` of the same Teams and keys
 * (the time and memory to list the same objects), each a process from start to exit.
 */
import { closeSync, openSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { prepared } from './figures.js';
import { figure, tempDir, type Figure, type Settings } from './lib.js';

const root = new URL('../', import.meta.url).pathname;
const bin = join(root, 'dist/cli/main.js');
const preload = join(root, 'bench/max-rss.mjs');

/** Seconds and peak MiB of `teamkeys ARGS`, its stdout written to a file (as a review is kept). */
function measure(args: string[], out: string, env: Record<string, string>): { seconds: number; peakMiB: number; bytes: number } {
  const fd = openSync(out, 'w');
  const started = performance.now();
  const r = spawnSync(process.execPath, ['--import', preload, bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' });
  const seconds = (performance.now() - started) / 1000;
  closeSync(fd);
  if (r.status !== 0) throw new Error(`teamkeys ${args.join(' ')} failed: ${r.stderr}`);
  const kib = Number(/maxrss-kib=(\d+)/.exec(r.stderr)?.[1] ?? NaN);
  return { seconds, peakMiB: Number((kib / 1024).toFixed(1)), bytes: statSync(out).size };
}

export async function accessReview(s: Settings): Promise<Figure[]> {
  const keys = s.quick ? 10_000 : 100_000;
  const teams = keys / 10;
  const data = await prepared(teams, keys);
  const tmp = tempDir('review');
  const env = { TEAMKEYS_ENCRYPTION_KEY_FILE: join(tmp.dir, 'encryption.yaml'), TEAMKEYS_STORE: '' };
  try {
    const store = ['--store', data.store];
    // The anchor: listing the same objects, in the same run, each kind by its own process.
    const listTeams = measure(['get', 'teams', '-o', 'json', ...store], join(tmp.dir, 'teams.json'), env);
    const listKeys = measure(['get', 'ownedaccesskeys', '-o', 'json', ...store], join(tmp.dir, 'keys.json'), env);
    const review = measure(['access-review', '-o', 'json', ...store], join(tmp.dir, 'review.json'), env);
    const md = measure(['access-review', '-o', 'markdown', ...store], join(tmp.dir, 'review.md'), env);
    const listSeconds = listTeams.seconds + listKeys.seconds;
    const notes = `${teams} Teams and ${keys} OwnedAccessKeys in SQLite (the memory.100k fixture), embedded store, each a process from start to exit; JSON ${(review.bytes / 1048576).toFixed(1)} MiB, markdown ${md.seconds.toFixed(2)} s and ${(md.bytes / 1048576).toFixed(1)} MiB; the lists' output ${((listTeams.bytes + listKeys.bytes) / 1048576).toFixed(1)} MiB`;
    return [
      figure({
        name: 'review.100k',
        value: Number(review.seconds.toFixed(2)),
        unit: 's',
        anchor: '`teamkeys get teams` + `get ownedaccesskeys -o json` of the same store',
        anchorValue: Number(listSeconds.toFixed(2)),
        target: 3,
        better: 'lower',
        notes,
      }),
      figure({
        name: 'review.100k.peak',
        value: review.peakMiB,
        unit: 'MiB',
        anchor: 'peak memory of `teamkeys get ownedaccesskeys -o json` of the same store',
        anchorValue: listKeys.peakMiB,
        target: 2,
        better: 'lower',
        notes: `peak resident memory (maxRSS) of the access-review process; the Teams' list peaked at ${listTeams.peakMiB} MiB`,
      }),
    ];
  } finally {
    tmp.cleanup();
    data.cleanup();
  }
}
