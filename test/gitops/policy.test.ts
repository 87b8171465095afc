import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, teamkeys } from '../support/cli.js';
import { kubectl, startServe, type Served } from '../server/serve-process.js';
import { newRepo, type Repo } from './git-repo.js';

const policies = join(root, 'examples/policies');
const team = (name: string, spec: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n${spec}`;
const key = (name: string, spec: string) => `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ${name}\nspec:\n  type: User\n${spec}`;
/** A team every example policy accepts, and a key that belongs to it. */
const goodTeam = team('payments', '  owner: {user: ana}\n  users: [ana, bo]\n  clusterRoles:\n    - name: teams-viewer\n  access:\n    - name: edit\n      verbs: [get, patch]\n      teams: [payments]\n');
const goodKey = key('payments-ci', '  team: payments\n  ttl: 2592000\n');

describe('CEL policies', () => {
  let dir: string;
  const validate = (files: Record<string, string>, policyDir = policies) => {
    rmSync(join(dir, 'src'), { recursive: true, force: true });
    mkdirSync(join(dir, 'src'));
    for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, 'src', f), text);
    return teamkeys(['validate', '--source', join(dir, 'src'), '--policy', policyDir], { cwd: dir });
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'teamkeys-policy-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('objects that satisfy every example policy validate', () => {
    const r = validate({ 'team.yaml': goodTeam, 'key.yaml': goodKey, 'user-key.yaml': key('bo-laptop', '  user: bo\n  ttl: 604800\n') });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^The manifests are valid: checked 3 objects \(2 OwnedAccessKeys, 1 Team\) from source /);
    expect(r.code).toBe(0);
  });

  it.each([
    ['keys-expire', { 'team.yaml': goodTeam, 'key.yaml': key('k', '  team: payments\n  ttl: 31536000\n') }, 'key.yaml:8:8: OwnedAccessKey/k violates policy "keys-expire": access keys must expire within 90 days'],
    ['keys-expire (no ttl)', { 'team.yaml': goodTeam, 'key.yaml': key('k', '  team: payments\n') }, 'key.yaml:6:3: OwnedAccessKey/k violates policy "keys-expire"'],
    ['team-has-owner', { 'team.yaml': team('payments', '  users: [ana]\n'), 'key.yaml': goodKey }, 'team.yaml:1:1: Team/payments violates policy "team-has-owner": every Team needs spec.owner (a user or a team)'],
    ['key-owner-in-git (team)', { 'team.yaml': goodTeam, 'key.yaml': key('k', '  team: elsewhere\n  ttl: 600\n') }, 'key.yaml:1:1: OwnedAccessKey/k violates policy "key-owner-in-git"'],
    ['key-owner-in-git (user)', { 'team.yaml': goodTeam, 'key.yaml': key('k', '  user: mallory\n  ttl: 600\n') }, 'violates policy "key-owner-in-git": a key must belong to a team defined in git or to a user listed in one'],
    ['forbidden-cluster-roles', { 'team.yaml': team('ops', '  owner: {user: ana}\n  clusterRoles:\n    - name: teams-viewer\n    - name: management-admin\n') }, 'team.yaml:8:5: Team/ops violates policy "forbidden-cluster-roles": management-admin is granted only through the platform team (and teamkeys-ci, the CI plan key\'s team)'],
    ['no-wildcard-verbs', { 'team.yaml': team('ops', '  owner: {user: ana}\n  access:\n    - name: all\n      verbs: ["*"]\n      teams: [ops]\n') }, 'team.yaml:8:5: Team/ops violates policy "no-wildcard-verbs": access rules must list their verbs, not "*"'],
  ])('%s: a violation is an error at the manifest, and nothing else is reported', (_name, files, message) => {
    const r = validate(files);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(message);
    expect(r.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('validate FILE... checks the policies over the files given, with every file in `git`', () => {
    validate({ 'team.yaml': goodTeam, 'key.yaml': key('k', '  user: mallory\n  ttl: 600\n') });
    const r = teamkeys(['validate', 'src/team.yaml', 'src/key.yaml', '--policy', policies], { cwd: dir });
    expect(r.stdout).toContain('src/key.yaml:1:1: OwnedAccessKey/k violates policy "key-owner-in-git"');
    expect(r.code).toBe(1);
    expect(teamkeys(['validate', 'src/team.yaml', '--policy', policies], { cwd: dir }).code).toBe(0);
  });

  it('a policy that does not compile, has an unknown kind or is not YAML is an error at its own file:line', () => {
    const bad = join(dir, 'bad-policies');
    rmSync(bad, { recursive: true, force: true });
    cpSync(policies, bad, { recursive: true });
    writeFileSync(join(bad, 'broken.yaml'), 'apiVersion: gitops.management.service/v1\nkind: Policy\nmetadata: {name: broken}\nspec:\n  validations:\n    - expression: "object.spec.ttl <"\n      message: x\n');
    writeFileSync(join(bad, 'wrong.yaml'), 'apiVersion: gitops.management.service/v1\nkind: Polcy\nmetadata: {name: wrong}\n');
    writeFileSync(join(bad, 'yaml.yaml'), 'kind: Policy\n  metadata: [\n');
    // A misspelt kind or field would silently drop a rule: both are errors.
    writeFileSync(join(bad, 'typos.yaml'), 'apiVersion: gitops.management.service/v1\nkind: Policy\nmetadata: {name: typos}\nspec:\n  match: [{kind: Teams}]\n  validations:\n    - expression: "true"\n      mesage: x\n');
    const r = validate({ 'team.yaml': goodTeam }, 'bad-policies');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^bad-policies\/broken\.yaml:6:19: policy "broken": the expression does not compile: at 1:\d+: /m);
    expect(r.stdout).toContain('bad-policies/wrong.yaml:2:7: expected kind Policy in gitops.management.service/v1, not "Polcy"');
    expect(r.stdout).toMatch(/^bad-policies\/yaml\.yaml:\d+:\d+: /m);
    expect(r.stdout).toContain('bad-policies/typos.yaml:5:18: unknown kind "Teams": expected Team or OwnedAccessKey');
    expect(r.stdout).toContain('bad-policies/typos.yaml:8:15: unknown field "spec.validations[0].mesage" (expected expression, message, fieldPath)');
    expect(r.stdout).not.toContain('violates');
  });
});

describe('CEL policies on plan and apply against a served process', () => {
  let served: Served;
  let repo: Repo;
  let work: string;
  const run = (command: string, ...extra: string[]) =>
    teamkeys([command, '--source', repo.dir, '--source-id', 'policy-test', '--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem'), '--policy', 'policies', ...extra], { cwd: work });
  beforeAll(async () => {
    served = await startServe();
    repo = await newRepo({ withExamples: false });
    work = mkdtempSync(join(tmpdir(), 'teamkeys-policy-work-'));
    cpSync(policies, join(work, 'policies'), { recursive: true });
    // oldObject is the live object: a key may not move to another team once it exists.
    writeFileSync(
      join(work, 'policies/key-team-fixed.yaml'),
      'apiVersion: gitops.management.service/v1\nkind: Policy\nmetadata: {name: key-team-fixed}\nspec:\n  match: [{kind: OwnedAccessKey}]\n  validations:\n    - expression: "oldObject == null || !has(oldObject.spec.team) || (has(object.spec.team) && object.spec.team == oldObject.spec.team)"\n      message: a key never changes team\n      fieldPath: spec.team\n',
    );
  });
  afterAll(async () => {
    await served.stop();
    repo.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it('a violation on apply writes nothing; once fixed, apply writes', async () => {
    repo.write('team.yaml', goodTeam);
    repo.write('key.yaml', key('payments-ci', '  team: payments\n  ttl: 31536000\n'));
    const before = kubectl(served, ['get', 'teams,oak', '-o', 'name']).stdout;
    const refused = run('apply');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('key.yaml:8:8: OwnedAccessKey/payments-ci violates policy "keys-expire"');
    expect(refused.stdout).toContain('nothing was written');
    expect(kubectl(served, ['get', 'teams,oak', '-o', 'name']).stdout).toBe(before);
    repo.write('key.yaml', goodKey);
    const applied = run('apply');
    expect(applied.stdout).toContain('Created 2, updated 0');
    expect(applied.code).toBe(0);
  });

  it('oldObject is the live object: the plan refuses what the live state forbids, validate (no server) does not', () => {
    repo.write('team.yaml', `${goodTeam}---\n${team('billing', '  owner: {team: payments}\n')}`);
    repo.write('key.yaml', key('payments-ci', '  team: billing\n  ttl: 2592000\n'));
    const plan = run('plan', '--detailed-exitcode');
    expect(plan.code).toBe(1);
    expect(plan.stdout).toContain('key.yaml:7:9: OwnedAccessKey/payments-ci violates policy "key-team-fixed": a key never changes team');
    const r = teamkeys(['validate', '--source', repo.dir, '--policy', 'policies'], { cwd: work });
    expect(r.code).toBe(0);
    expect(JSON.parse(kubectl(served, ['get', 'oak', 'payments-ci', '-o', 'json']).stdout).spec.team).toBe('payments');
  });
});
