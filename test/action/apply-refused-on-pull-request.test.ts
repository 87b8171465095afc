/**
 * review-ops: on a pull_request event the Action treats the source as untrusted (withholds live
 * values) but still runs `command: apply`: a pull request that points key-secret at its author's
 * repository gets the key rotated and its new value delivered there (and the value CI holds
 * revoked at once). The Action knows the event: it should refuse apply on pull_request.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRunner, pullRequestPayload, schedulePayload, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startGitHubStandIn, type GitHubStandIn } from '../gitops/github-standin.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';
import { day, ManualClock } from '../support/clock.js';
import { monthlyKeyYaml } from '../support/manifests.js';


describe('the Action on a pull request', () => {
  const clock = new ManualClock(Date.now() - 31 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let repo: Repo;
  let runner: ActionRunner;

  /** The action for a schedule or a pull_request event. */
  const runAction = async (inputs: Record<string, string>, event = 'schedule') => {
    const r = await runner.run({ workspace: repo.dir, event, payload: event === 'pull_request' ? pullRequestPayload() : schedulePayload, inputs, apiUrl: github.url });
    return { ...r, stdout: r.log };
  };
  const inputs = { command: 'apply', server: '', token: adminKey, source: 'gitops', 'source-id': 'ci-keys', 'github-token': '' };

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    github = await startGitHubStandIn();
    runner = actionRunner();
    repo = await newRepo({ withExamples: false });
    repo.write(
      'gitops/deploy.yaml',
      monthlyKeyYaml({ overlap: '6h' }),
    );
    await repo.commit('a monthly key');
    Object.assign(inputs, { server: server.base, 'github-token': github.token });
  });
  afterAll(async () => {
    await server.close();
    await github.close();
    repo.cleanup();
    runner.cleanup();
  });

  it('never rotates or delivers a key on a pull_request event, whatever the command input says', async () => {
    const created = await runAction({ ...inputs, comment: 'false' });
    expect(created.code, created.stdout).toBe(0);
    const held = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    // The pull request's proposal: the key's value goes to its author's repository.
    repo.write('gitops/deploy.yaml', readFileSync(join(repo.dir, 'gitops/deploy.yaml'), 'utf8').replace('github:acme/payments/DEPLOY_KEY', 'github:mallory/exfil/STOLEN'));
    await repo.commit('pr: move the secret');
    const pr = await runAction({ ...inputs, comment: 'false' }, 'pull_request');
    expect(github.secrets.get('mallory/exfil/STOLEN')).toBeUndefined();
    expect((await fetch(`${server.api}/ownedaccesskeys/deploy-ci`, { headers: { Authorization: `Bearer ${held}` } })).status).toBe(200);
    expect(pr.code).not.toBe(0);
    expect(pr.stdout).toContain('command: apply is refused on a pull_request event');
  });
});
