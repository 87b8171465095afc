/**
 * The Action on a pull request with require-approvals: it reads the pull request's reviews through
 * the runner's GitHub API (a stand-in here), says in the summary and the failed step which team's
 * approval is missing, and passes once an owner of the team approved the head commit.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { actionRunner, pullRequestPayload, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startReviewsStandIn, type ReviewsStandIn } from '../gitops/github-reviews-standin.js';
import { startServe, type Served } from '../server/serve-process.js';

const payments = (users: string) => `apiVersion: management.service/v1
kind: Team
metadata: {name: payments}
spec:
  owner: {user: carol}
  users: [${users}]
`;

describe('the Action: approvals on a pull request', () => {
  let served: Served;
  let repo: Repo;
  let github: ReviewsStandIn;
  let runner: ActionRunner;
  const head = 'abc';

  const plan = async () =>
    runner.run({
      workspace: repo.dir,
      event: 'pull_request',
      payload: pullRequestPayload({ sha: (await repo.git.revparse(['HEAD~1'])).trim() }),
      inputs: {
        command: 'plan',
        server: served.url,
        token: served.adminKey,
        'ca-cert': readFileSync(join(served.dir, 'tls/cert.pem'), 'utf8'),
        source: 'gitops',
        'source-id': 'ci',
        comment: 'false',
        'require-approvals': 'true',
        'github-token': github.token,
      },
      apiUrl: github.url,
    });

  beforeAll(async () => {
    [served, github, repo] = await Promise.all([startServe(), startReviewsStandIn(), newRepo({ withExamples: false })]);
    runner = actionRunner();
    repo.write('gitops/teams/payments.yaml', payments('ana'));
    await repo.commit('payments');
    const live = teamkeys(['apply', '--source', join(repo.dir, 'gitops'), '--source-id', 'ci', '--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')]);
    expect(live.code, live.stderr).toBe(0);
    repo.write('gitops/teams/payments.yaml', payments('ana, bob'));
    await repo.commit('add bob');
  });
  afterAll(async () => {
    await Promise.all([served.stop(), github.close()]);
    repo.cleanup();
    runner.cleanup();
  });

  it("fails the step naming the missing owner's approval, and passes with it", async () => {
    github.pulls.set('acme/platform-teams#7', { author: 'bob', headSha: head, reviews: [{ user: { login: 'bob' }, state: 'APPROVED', commit_id: head }] });
    const missing = await plan();
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('::error::approval missing on pull request acme/platform-teams#7: team "payments" (update Team/payments): needs an approval from one of @carol');
    expect(missing.summary).toContain('**approval missing**');

    github.pulls.set('acme/platform-teams#7', { author: 'bob', headSha: head, reviews: [{ user: { login: 'carol' }, state: 'APPROVED', commit_id: head }] });
    const approved = await plan();
    expect(approved.code, approved.log).toBe(0);
    expect(approved.summary).toContain('approved by @carol');
    expect(approved.outputs.outcome).toBe('changes');
  });
});
