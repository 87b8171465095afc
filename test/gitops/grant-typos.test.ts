/**
 * Typos in grants, over a served process and temp git repositories: an unknown cluster role or
 * access verb is an error at file:line:col in validate and plan, and accepted by the server with a
 * Warning (the API document allows roles of clusters elsewhere); teams named by owners and access
 * rules that exist nowhere are warnings naming the file; a plan that prunes a team whose key stays
 * is an error at the key (in git) or refused (a live key outside git).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { teamkeys } from '../support/cli.js';
import { kubectl, kubectlPath, startServe, type Served } from '../server/serve-process.js';
import { newRepo, type Repo } from './git-repo.js';

const header = (kind: string, name: string) => `apiVersion: management.service/v1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n`;
const team = (name: string, spec = '') => `${header('Team', name)}  displayName: ${name}\n${spec}`;
const teamKey = (name: string, of: string) => `${header('OwnedAccessKey', name)}  team: ${of}\n  type: User\n`;

describe('typos in grants', () => {
  let served: Served;
  const repos: Repo[] = [];
  const serverFlags = () => ['--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')];
  const run = (command: string, repo: Repo, ...extra: string[]) => {
    const r = teamkeys([command, '--source', join(repo.dir, 'gitops'), ...(command === 'validate' ? [] : serverFlags()), ...extra]);
    return r;
  };
  const json = (command: string, repo: Repo, ...extra: string[]) => {
    const r = run(command, repo, '--output', 'json', ...extra);
    return { ...r, report: JSON.parse(r.stdout) as Report };
  };
  const repoWith = async (files: Record<string, string>) => {
    const repo = await newRepo({ withExamples: false });
    repos.push(repo);
    for (const [path, text] of Object.entries(files)) repo.write(`gitops/${path}`, text);
    await repo.commit('manifests');
    return repo;
  };

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
  });
  afterAll(async () => {
    await served.stop();
    for (const r of repos) r.cleanup();
  });

  const typos = team('typos', '  clusterRoles:\n    - name: team-viewer\n  access:\n    - name: edit\n      verbs: [get, updat]\n      teams: [typos]\n');

  it('validate: an unknown cluster role and an unknown verb are errors at file:line:col, with the word meant', async () => {
    const repo = await repoWith({ 'teams/typos.yaml': typos });
    const r = run('validate', repo);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'gitops/teams/typos.yaml:8:13: spec.clusterRoles[0].name: unknown cluster role "team-viewer": did you mean "teams-viewer"? the management roles are management-admin, teams-admin, teams-viewer, teams-creator, accesskeys-admin',
    );
    expect(r.stdout).toContain('gitops/teams/typos.yaml:11:20: spec.access[0].verbs[1]: unknown verb "updat": did you mean "update"? the verbs are get, list, watch, create, update, patch, delete, deletecollection, or "*" for all');
    expect(r.stdout).toContain('2 error(s) in the manifests.');
    expect(r.stdout).toContain('(a role of other clusters: list it in the gitops.management.service/other-cluster-roles annotation)');
  });

  it('validate: a role of other clusters is accepted when the Team lists it in its annotation', async () => {
    const elsewhere = team('ops', '  clusterRoles:\n    - name: cluster-admin\n').replace('metadata:\n', 'metadata:\n  annotations:\n    gitops.management.service/other-cluster-roles: cluster-admin, view\n');
    const repo = await repoWith({ 'teams/ops.yaml': elsewhere });
    const r = run('validate', repo);
    expect(r.code, r.stdout).toBe(0);
  });

  it('plan: the same errors, and nothing is planned', async () => {
    const repo = await repoWith({ 'teams/typos.yaml': typos });
    const r = json('plan', repo);
    expect(r.code).toBe(1);
    expect(r.report.outcome).toBe('invalid');
    expect(r.report.errors.map((e) => `${e.file}:${e.line}:${e.column}`)).toEqual(['gitops/teams/typos.yaml:8:13', 'gitops/teams/typos.yaml:11:20']);
    expect(r.report.objects).toEqual([]);
  });

  it('the server accepts them (the API allows any role name) with a Warning naming the field', async () => {
    const repo = await repoWith({ 'teams/typos.yaml': typos });
    const r = kubectl(served, ['apply', '-f', join(repo.dir, 'gitops/teams/typos.yaml')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('team.management.service/typos created');
    expect(r.stderr).toContain('Warning: spec.clusterRoles[0].name: unknown cluster role "team-viewer": did you mean "teams-viewer"?');
    expect(r.stderr).toContain('Warning: spec.access[0].verbs[1]: unknown verb "updat": did you mean "update"?');
    expect(r.stderr).toContain('(accepted, but it grants nothing on this API)');
    // A correct team gets no warning.
    const clean = kubectl(served, ['patch', 'team', 'typos', '--type=merge', '-p', '{"spec":{"clusterRoles":[{"name":"teams-viewer"}],"access":[{"name":"edit","verbs":["get","update"],"teams":["typos"]}]}}']);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stderr).not.toContain('Warning');
    expect(kubectl(served, ['delete', 'team', 'typos']).code).toBe(0);
  });

  it('owners and access rules naming teams that exist nowhere are warnings naming the file; the plan goes on', async () => {
    const repo = await repoWith({ 'teams/refs.yaml': team('refs', '  owner:\n    team: nosuchteam\n  access:\n    - name: ghosts\n      verbs: [get]\n      teams: [refs, ghost-team]\n') });
    const text = run('plan', repo, '--detailed-exitcode');
    expect(text.code, text.stderr).toBe(2);
    expect(text.stdout).toContain('gitops/teams/refs.yaml:8:11: warning: spec.owner.team: team "nosuchteam" exists neither in the source nor on the server, so this grants nothing until it does');
    expect(text.stdout).toContain('gitops/teams/refs.yaml:12:21: warning: spec.access[0].teams[1]: team "ghost-team" exists neither in the source nor on the server');
    expect(text.stdout).toContain('+ Team/refs');
    const r = json('plan', repo);
    expect(r.report.outcome).toBe('changes');
    expect(r.report.warnings).toHaveLength(2);
    // A team that exists live is no warning.
    expect(kubectl(served, ['create', '-f', '-'], { input: team('nosuchteam') }).code).toBe(0);
    expect(json('plan', repo).report.warnings).toHaveLength(1);
    expect(kubectl(served, ['delete', 'team', 'nosuchteam']).code).toBe(0);
  });

  it('pruning a team whose key stays in git is an error at the key; removing the key too is a plan', async () => {
    const repo = await repoWith({ 'teams/doomed.yaml': team('doomed'), 'accesskeys/doomed-ci.yaml': teamKey('doomed-ci', 'doomed') });
    const applied = run('apply', repo, '--prune');
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    repo.remove('gitops/teams/doomed.yaml');
    await repo.commit('team gone, key kept');
    const r = json('plan', repo, '--prune');
    expect(r.code).toBe(1);
    expect(r.report.outcome).toBe('invalid');
    expect(r.report.errors).toEqual([
      {
        file: 'gitops/accesskeys/doomed-ci.yaml',
        line: 6,
        column: 9,
        message: 'spec.team: team "doomed" is no longer in the source and this plan prunes it, which deletes this key with it: remove the key from the source too, or keep the team',
      },
    ]);
    // Without --prune the team is left alone, and so is the key.
    expect(json('plan', repo).code).toBe(0);
    repo.remove('gitops/accesskeys/doomed-ci.yaml');
    repo.write('gitops/teams/other.yaml', team('other'));
    await repo.commit('key gone too');
    const both = json('plan', repo, '--prune');
    expect(both.code, both.stderr).toBe(0);
    expect(both.report.objects.filter((o) => o.action === 'delete').map((o) => `${o.kind}/${o.name}`).sort()).toEqual(['OwnedAccessKey/doomed-ci', 'Team/doomed']);
  });

  it('pruning a team whose key lives outside git refuses the plan', async () => {
    const repo = await repoWith({ 'teams/kept.yaml': team('kept'), 'teams/lonely.yaml': team('lonely') });
    expect(run('apply', repo, '--prune').code).toBe(0);
    expect(kubectl(served, ['create', '-f', '-'], { input: teamKey('lonely-by-hand', 'lonely') }).code).toBe(0);
    repo.remove('gitops/teams/lonely.yaml');
    await repo.commit('lonely gone');
    const r = json('apply', repo, '--prune');
    expect(r.code).toBe(1);
    expect(r.report.outcome).toBe('refused');
    expect(r.report.refused).toBe('pruning a team deletes its keys and FederatedCredentials too, and this plan keeps OwnedAccessKey/lonely-by-hand (team lonely): delete them first, or keep the team in the source');
    expect(kubectl(served, ['get', 'team', 'lonely', '-o', 'name']).code).toBe(0);
  });
});
