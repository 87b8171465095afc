/** The CLI's figures: how fast `teamkeys validate` starts, and how fast `teamkeys apply` writes, each beside its anchor. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyAgainstKubectl } from './figures.js';
import { figure, percentile, tempDir, wallSeconds, type Figure, type Settings } from './lib.js';

const root = new URL('../', import.meta.url).pathname;
const bin = join(root, 'dist/cli/main.js');

/** `teamkeys validate` of one file against a bare `node -e 0` start: median of N runs each, interleaved. */
export async function cliStart(s: Settings): Promise<Figure> {
  const runs = s.quick ? 11 : 31;
  const tmp = tempDir('start');
  const file = join(tmp.dir, 'team.yaml');
  writeFileSync(file, 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: platform\nspec:\n  displayName: Platform\n  users: [ana, bo]\n  clusterRoles:\n  - name: teams-viewer\n');
  const validate: number[] = [];
  const bare: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      // Interleaved, so a busy moment of the machine falls on both.
      bare.push(wallSeconds(process.execPath, ['-e', '0']).seconds * 1000);
      const v = wallSeconds(process.execPath, [bin, 'validate', file]);
      if (v.status !== 0) throw new Error(`teamkeys validate failed: ${v.stderr}`);
      validate.push(v.seconds * 1000);
    }
  } finally {
    tmp.cleanup();
  }
  return figure({
    name: 'cli.start',
    value: Math.round(percentile(validate, 50)),
    unit: 'ms',
    anchor: 'a bare `node -e 0` start, median',
    anchorValue: Math.round(percentile(bare, 50)),
    target: 3,
    better: 'lower',
    notes: `median of ${runs} runs each, interleaved; validate of one Team file from dist/cli/main.js`,
  });
}

/** `teamkeys apply` of 300 new Teams against `kubectl apply --server-side -f DIR` of the same files, each to a fresh server over HTTPS. */
export function apply300(): Promise<Figure> {
  return applyAgainstKubectl(300, 'apply.300', '300 new Teams over HTTPS, each tool from process start to exit; teamkeys with its default --concurrency, kubectl one object after another');
}
