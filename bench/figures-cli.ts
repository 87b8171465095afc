/** The CLI's figures: how fast `teamkeys validate` starts, and how fast `teamkeys apply` writes, each beside its anchor. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyAgainstKubectl } from './figures.js';
import { figure, percentile, tempDir, wallSeconds, type Figure, type Settings } from './lib.js';

const root = new URL('../', import.meta.url).pathname;
const bin = join(root, 'dist/cli/main.js');

/** Median wall time of `args` (run by node) against a bare `node -e 0` start, N runs each, interleaved. */
function startAgainstNode(runs: number, what: string, args: string[], env: Record<string, string> = {}, before?: () => void): { value: number; anchorValue: number } {
  const measured: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < runs; i++) {
    // Interleaved, so a busy moment of the machine falls on both.
    bare.push(wallSeconds(process.execPath, ['-e', '0']).seconds * 1000);
    before?.();
    const v = wallSeconds(process.execPath, args, env);
    if (v.status !== 0) throw new Error(`${what} failed: ${v.stderr}`);
    measured.push(v.seconds * 1000);
  }
  return { value: Math.round(percentile(measured, 50)), anchorValue: Math.round(percentile(bare, 50)) };
}

/** `teamkeys validate` of one file against a bare `node -e 0` start: median of N runs each, interleaved. */
export async function cliStart(s: Settings): Promise<Figure> {
  const runs = s.quick ? 11 : 31;
  const tmp = tempDir('start');
  const file = join(tmp.dir, 'team.yaml');
  writeFileSync(file, 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: platform\nspec:\n  displayName: Platform\n  users: [ana, bo]\n  clusterRoles:\n  - name: teams-viewer\n');
  try {
    return figure({
      name: 'cli.start',
      ...startAgainstNode(runs, 'teamkeys validate', [bin, 'validate', file]),
      unit: 'ms',
      anchor: 'a bare `node -e 0` start, median',
      target: 3,
      better: 'lower',
      notes: `median of ${runs} runs each, interleaved; validate of one Team file from dist/cli/main.js`,
    });
  } finally {
    tmp.cleanup();
  }
}

/** `teamkeys credential` (kubectl's exec plugin, run before every kubectl command) with a cached Login key, against `node -e 0`. */
export async function credentialStart(s: Settings): Promise<Figure> {
  const runs = s.quick ? 11 : 31;
  const tmp = tempDir('credential');
  const server = 'https://teamkeys.example:8443/kubernetes/management';
  mkdirSync(join(tmp.dir, 'teamkeys', 'logins'), { recursive: true });
  const login = { server, name: 'login-ana-x1', key: 'k'.repeat(64), user: 'ana', ttlSeconds: 3600, expirationTimestamp: '2999-01-01T00:00:00Z' };
  // Each run is a fresh kubectl's: the cache as another process left it. Run after run from this
  // one parent would read as client-go calling again after a 401, and the plugin would ask the
  // server (src/cli/credential.ts), which here is a name that must not be resolved.
  const cache = () => writeFileSync(join(tmp.dir, 'teamkeys', 'logins', 'https_teamkeys.example_8443_kubernetes_management.json'), JSON.stringify(login));
  try {
    return figure({
      name: 'cli.credential',
      ...startAgainstNode(runs, 'teamkeys credential', [bin, 'credential', '--server', server], { XDG_CONFIG_HOME: tmp.dir }, cache),
      unit: 'ms',
      anchor: 'a bare `node -e 0` start, median',
      target: 2,
      better: 'lower',
      notes: `median of ${runs} runs each, interleaved; credential with a cached Login key, printing its ExecCredential`,
    });
  } finally {
    tmp.cleanup();
  }
}

/** `teamkeys apply` of 300 new Teams against `kubectl apply --server-side -f DIR` of the same files, each to a fresh server over HTTPS. */
export function apply300(): Promise<Figure> {
  return applyAgainstKubectl(300, 'apply.300', '300 new Teams over HTTPS, each tool from process start to exit; teamkeys with its default --concurrency, kubectl one object after another');
}
