/**
 * policy.5mb: validate and plan of a 5 MB pull request (teams, their users, keys owned by teams
 * and by users) with the shipped policies (examples/policies/), against the same without them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { figure, tempDir, wallSeconds, type Figure, type Settings } from './lib.js';

const root = new URL('../', import.meta.url).pathname;
const bin = join(root, 'dist/cli/main.js');

/** Writes `teams` Teams of `usersPerTeam` users each and `keys` keys (half a team's, half a user's); returns the bytes written. */
export function writePullRequest(dir: string, teams: number, usersPerTeam: number, keys: number): number {
  mkdirSync(join(dir, 'teams'), { recursive: true });
  mkdirSync(join(dir, 'accesskeys'), { recursive: true });
  let bytes = 0;
  const write = (file: string, text: string) => {
    writeFileSync(join(dir, file), text);
    bytes += Buffer.byteLength(text);
  };
  const user = (t: number, u: number) => `user-${t}-${u}@example.com`;
  for (let t = 0; t < teams; t++) {
    const users = Array.from({ length: usersPerTeam }, (_, u) => `    - ${user(t, u)}\n`).join('');
    write(`teams/team-${t}.yaml`, `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: team-${t}\n  labels: {tier: standard}\nspec:\n  description: Team number ${t}, generated for the policy benchmark\n  owner: {user: ${user(t, 0)}}\n  users:\n${users}  clusterRoles:\n    - name: teams-viewer\n  access:\n    - name: edit\n      verbs: [get, patch]\n      teams: [team-${t}]\n`);
  }
  // Keys in files of 100 documents, as a large repository groups them.
  for (let f = 0; f * 100 < keys; f++) {
    const docs: string[] = [];
    for (let k = f * 100; k < Math.min(keys, (f + 1) * 100); k++) {
      const t = k % teams;
      const owner = k % 2 === 0 ? `  team: team-${t}\n` : `  user: ${user(t, k % usersPerTeam)}\n`;
      docs.push(`apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: key-${k}\n  labels: {purpose: ci}\nspec:\n  type: User\n${owner}  ttl: 2592000\n  description: key ${k}, generated for the policy benchmark\n`);
    }
    write(`accesskeys/keys-${f}.yaml`, docs.join('---\n'));
  }
  return bytes;
}

/** CPU seconds (user + system) of validate then plan over `source`, with or without --policy. */
function validateAndPlan(source: string, store: string, policy: string[]): number {
  let seconds = 0;
  for (const command of ['validate', 'plan']) {
    const args = command === 'validate' ? ['validate', '--source', source, ...policy] : ['plan', '--source', source, '--source-id', 'bench', '--store', store, ...policy];
    const r = wallSeconds(process.execPath, ['--import', join(root, 'bench/cpu-time.mjs'), bin, ...args]);
    const cpu = r.stderr.match(/cpu-seconds=([\d.]+)/);
    if ((r.status !== 0 && !(command === 'plan' && r.status === 2)) || !cpu) throw new Error(`${command} failed (${r.status}): ${r.stderr.slice(0, 2000)}`);
    seconds += Number(cpu[1]);
  }
  return seconds;
}

export async function policy5mb(s: Settings): Promise<Figure> {
  const tmp = tempDir('policy');
  try {
    const source = join(tmp.dir, 'repo');
    // About 5 MB at full size: 500 teams of 20 users, 20,000 keys.
    const [teams, users, keys] = s.quick ? [100, 20, 4000] : [500, 20, 20_000];
    const bytes = writePullRequest(source, teams, users, keys);
    const store = `sqlite:${join(tmp.dir, 'db')}`;
    const without = validateAndPlan(source, store, []);
    const withPolicies = validateAndPlan(source, store, ['--policy', join(root, 'examples/policies')]);
    return figure({
      name: 'policy.5mb',
      value: Number(withPolicies.toFixed(2)),
      unit: 'CPU s',
      anchor: 'the same validate and plan without --policy',
      anchorValue: Number(without.toFixed(2)),
      target: 2,
      better: 'lower',
      notes: `${(bytes / 1e6).toFixed(1)} MB: ${teams} Teams of ${users} users, ${keys} keys (half a team's, half a user's), every shipped policy; CPU time (user + system) of validate plus plan, embedded SQLite, empty store`,
    });
  } finally {
    tmp.cleanup();
  }
}
