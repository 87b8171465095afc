import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceModels } from '../../src/api/model.js';
import { defaultPolicyBudget } from '../../src/gitops/policy/cost.js';
import { runPolicies } from '../../src/gitops/policy/evaluate.js';
import { loadPolicies } from '../../src/gitops/policy/load.js';
import { parseFiles } from '../../src/gitops/source/files.js';
import { validateManifests } from '../../src/gitops/validate.js';
import { root, teamkeys } from '../support/cli.js';

/** The pull request of issue 42, scaled: `teams` Teams listing `users` users each, `keys` keys of users listed only in the last team. */
function pullRequest(teams: number, users: number, keys: number): string {
  const docs: string[] = [];
  for (let t = 0; t < teams; t++) docs.push(`apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: team-${t}\nspec:\n  owner: {user: u-${t}-0}\n  users: [${Array.from({ length: users }, (_, u) => `u-${t}-${u}`).join(', ')}]\n`);
  for (let k = 0; k < keys; k++) docs.push(`apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: key-${k}\nspec:\n  type: User\n  user: u-${teams - 1}-${k % users}\n  ttl: 600\n`);
  return docs.join('---\n');
}

const desiredOf = (text: string) => {
  const parsed = parseFiles([{ path: 'pr.yaml', text }]);
  const { desired, errors } = validateManifests(parsed.manifests, Object.values(resourceModels()));
  expect(errors).toEqual([]);
  return desired;
};

/** key-owner-in-git as it was shipped before: for each key, every team and every user of it. */
const scanning = `apiVersion: gitops.management.service/v1
kind: Policy
metadata:
  name: key-owner-scan
spec:
  match:
    - kind: OwnedAccessKey
  validations:
    - expression: >-
        (has(object.spec.team) && git.teams.exists(t, t.metadata.name == object.spec.team)) ||
        (has(object.spec.user) && git.teams.exists(t, has(t.spec.users) && object.spec.user in t.spec.users))
      message: a key must belong to a team defined in git or to a user listed in one
`;

describe('policy cost (issue 42, point 4)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'teamkeys-policy-cost-'));
    mkdirSync(join(dir, 'scan'));
    writeFileSync(join(dir, 'scan', 'scan.yaml'), scanning);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const shipped = async () => {
    const { policies, errors } = await loadPolicies(join(root, 'examples/policies'));
    expect(errors).toEqual([]);
    return policies.filter((p) => p.name === 'key-owner-in-git');
  };

  it('the shipped key-owner-in-git costs the same per key however many teams and users the pull request lists', async () => {
    const policies = await shipped();
    const cost = (teams: number, users: number, keys: number) => {
      const run = runPolicies(policies, desiredOf(pullRequest(teams, users, keys)));
      expect(run.errors).toEqual([]);
      return run.cost;
    };
    const base = cost(10, 20, 100);
    expect(cost(40, 80, 100)).toBe(base);
    expect(cost(10, 20, 400)).toBe(4 * base);
  });

  it('the scanning rule it replaces is charged keys x teams x users, and a run over its budget is refused at the expression', async () => {
    const { policies } = await loadPolicies(join(dir, 'scan'), dir);
    const small = runPolicies(policies, desiredOf(pullRequest(10, 20, 100)));
    const large = runPolicies(policies, desiredOf(pullRequest(40, 80, 100)));
    expect(large.cost).toBeGreaterThan(10 * small.cost);
    const refused = runPolicies(policies, desiredOf(pullRequest(40, 80, 100)), undefined, { ...defaultPolicyBudget, perRun: large.cost / 2 });
    expect(refused.errors).toHaveLength(1);
    expect(refused.errors[0]).toMatchObject({ file: 'scan/scan.yaml', line: 9, column: 19 });
    expect(refused.errors[0]!.message).toMatch(/^policy "key-owner-scan" exceeded the cost budget of a policy run \(\d+\) while checking OwnedAccessKey\/key-\d+ \(pr\.yaml:\d+\), so no policy result stands/);
  });

  it('a run past its CPU time or heap budget is refused at the expression that was running', async () => {
    const { policies } = await loadPolicies(join(dir, 'scan'), dir);
    const desired = desiredOf(pullRequest(40, 80, 400));
    const slow = runPolicies(policies, desired, undefined, { ...defaultPolicyBudget, cpuSeconds: 0.01 });
    expect(slow.errors.map((e) => e.message)).toEqual([expect.stringContaining('exceeded the time budget of a policy run (0.01 CPU seconds)')]);
    // Every pair of key names, built as strings: some 10 MB live within one evaluation.
    writeFileSync(join(dir, 'scan', 'pairs.yaml'), 'apiVersion: gitops.management.service/v1\nkind: Policy\nmetadata:\n  name: name-pairs\nspec:\n  validations:\n    - message: m\n      expression: "git.ownedaccesskeys.map(a, git.ownedaccesskeys.map(b, a.metadata.name + \'/\' + b.metadata.name)).size() > 0"\n');
    const pairs = (await loadPolicies(join(dir, 'scan'), dir)).policies.filter((p) => p.name === 'name-pairs');
    rmSync(join(dir, 'scan', 'pairs.yaml'));
    const heavy = runPolicies(pairs, desired, undefined, { ...defaultPolicyBudget, heapMiB: 2 });
    expect(heavy.errors.map((e) => e.message)).toEqual([expect.stringContaining('exceeded the memory budget of a policy run (2 MiB of heap)')]);
  });

  it('a rule that costs more than kube-apiserver allows one evaluation is refused by validate at its file:line, and stops there', () => {
    const src = join(dir, 'src');
    const policy = join(dir, 'pairs');
    mkdirSync(src);
    mkdirSync(policy);
    // Every pair of keys for each key: 1,100 keys cost 1.2 million per evaluation (1.3 billion in all, without a limit).
    writeFileSync(join(src, 'pr.yaml'), pullRequest(1, 10, 1100));
    writeFileSync(
      join(policy, 'pairs.yaml'),
      'apiVersion: gitops.management.service/v1\nkind: Policy\nmetadata:\n  name: unique-names\nspec:\n  validations:\n    - message: names are unique\n      expression: "git.ownedaccesskeys.all(a, git.ownedaccesskeys.all(b, a == b || a.metadata.name != b.metadata.name))"\n',
    );
    const r = teamkeys(['validate', '--source', 'src', '--policy', 'pairs'], { cwd: dir });
    expect(r.stdout).toContain(`pairs/pairs.yaml:8:19: policy "unique-names" exceeded the cost limit of one evaluation (1000000, kube-apiserver's per-call limit for CEL rules) while checking Team/team-0 (pr.yaml:1), so no policy result stands`);
    expect(r.stdout.trim().split('\n')).toHaveLength(2);
    expect(r.code).toBe(1);
  });
});
