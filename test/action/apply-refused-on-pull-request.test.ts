/**
 * review-ops: on a pull_request event the Action treats the source as untrusted (withholds live
 * values) but still runs `command: apply`: a pull request that points key-secret at its author's
 * repository gets the key rotated and its new value delivered there (and the value CI holds
 * revoked at once). The Action knows the event: it should refuse apply on pull_request.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Repo } from '../gitops/git-repo.js';
import type { GitHubStandIn } from '../gitops/github-standin.js';
import type { InProcess } from '../server/in-process.js';
import { day, ManualClock } from '../support/clock.js';
import { startMonthlyKeyAction, type MonthlyKeyAction } from '../support/monthly-key-action.js';

describe('the Action on a pull request', () => {
  const clock = new ManualClock(Date.now() - 31 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let repo: Repo;
  let world: MonthlyKeyAction;
  let inputs: Record<string, string>;
  const runAction = (given: Record<string, string>, event: 'schedule' | 'pull_request' = 'schedule') => world.run(given, event);

  beforeAll(async () => {
    world = await startMonthlyKeyAction(clock);
    ({ server, github, repo, inputs } = world);
  });
  afterAll(() => world?.stop());

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
