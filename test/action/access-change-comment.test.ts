/**
 * The Action's pull request comment shows the plan's access change (as test/action/action.test.ts
 * runs the bundled Action): who gains what, most powerful first; and, since a pull request may
 * not read live values its manifests do not name, a change naming someone only live objects name
 * is counted, not shown.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../support/cli.js';
import { actionRunner, pullRequestPayload, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { kubectl, startServe, type Served } from '../server/serve-process.js';
import { startFakeGitHub, type FakeGitHub } from './github-api.js';

/** The pull request pullRequestPayload describes. */
const pr = 7;

describe("the Action's comment shows the access change of a pull request", () => {
  let served: Served;
  let repo: Repo;
  let github: FakeGitHub;
  let runner: ActionRunner;
  const repository = { name: 'platform-teams', owner: { login: 'acme' } };
  const server = () => ({ server: served.url, token: served.adminKey, 'ca-cert': readFileSync(join(served.dir, 'tls/cert.pem'), 'utf8'), 'source-id': 'ci', source: 'gitops' });
  async function runAction(command: 'plan' | 'apply') {
    const sha = (await repo.git.revparse(['HEAD'])).trim();
    return runner.run({
      workspace: repo.dir,
      event: command === 'apply' ? 'push' : 'pull_request',
      payload: command === 'apply' ? { ref: 'refs/heads/main', after: sha, repository } : pullRequestPayload({ ref: 'main', sha }),
      inputs: { command, ...server() },
      inputDefaults: { 'github-token': 'ghs_workflowTokenForTheTest0123456789' },
      apiUrl: github.url,
    });
  }

  beforeAll(async () => {
    served = await startServe();
    github = await startFakeGitHub('acme', 'platform-teams', pr);
    runner = actionRunner();
    repo = await newRepo({ withExamples: false });
    repo.write('gitops/teams/auditors.yaml', readFileSync(join(root, 'examples/gitops/teams/auditors.yaml'), 'utf8'));
    await repo.commit('manifests');
    // A team this source does not describe, whose members a pull request may not read.
    const finance = { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'finance' }, spec: { users: ['fiona'] } };
    expect(kubectl(served, ['create', '-f', '-'], { input: JSON.stringify(finance) }).code).toBe(0);
    expect((await runAction('apply')).code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await served.stop();
    await github.close();
    repo.cleanup();
    runner.cleanup();
  });

  it('lists who gains what; a gain of someone only live objects name is counted, not named', async () => {
    const auditors = readFileSync(join(root, 'examples/gitops/teams/auditors.yaml'), 'utf8')
      .replace('users: [carla]', 'users: [carla, dan]')
      .replace('  clusterRoles:', '  access:\n    - {name: finance-reads, verbs: [get], teams: [finance]}\n  clusterRoles:');
    repo.write('gitops/teams/auditors.yaml', auditors);
    const r = await runAction('plan');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const body = [...github.comments.values()].find((c) => c.startsWith('<!-- teamkeys-plan'))!;
    expect(body).toContain('### Access change');
    expect(body).toContain('- **dan**\n  - gains cluster role `teams-viewer` (via team auditors)\n  - gains get, list, watch on `teams/*` (via team auditors, role teams-viewer)');
    expect(body).toContain('1 more change(s) name users, groups, keys or teams this source does not describe: not shown in a pull request.');
    expect(body).not.toContain('fiona');
  });
});
