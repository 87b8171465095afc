/**
 * Issue 42, point 9: key-secret targets had no allow-list: a merged change could send a key to
 * `github:someone-else/...`. The owners a source may deliver to are now the key-secret-owners
 * input, by default the owner of the repository the workflow runs in (acme here), named in the plan.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRunner, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startGitHubStandIn, type GitHubStandIn } from '../gitops/github-standin.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';

const key = (sink: string) =>
  `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: deploy-ci\n  annotations:\n    gitops.management.service/key-secret: ${sink}\nspec:\n  user: ci-bot\n`;

describe('the owners key-secret may deliver keys to', () => {
  let server: InProcess;
  let github: GitHubStandIn;
  let repo: Repo;
  let runner: ActionRunner;
  const push = (inputs: Record<string, string>) =>
    runner.run({ workspace: repo.dir, event: 'push', payload: { ref: 'refs/heads/main' }, inputs: { server: server.base, token: adminKey, source: 'gitops', 'source-id': 'ci-keys', comment: 'false', 'github-token': github.token, ...inputs }, apiUrl: github.url });

  beforeAll(async () => {
    server = await startInProcess();
    github = await startGitHubStandIn();
    runner = actionRunner();
    repo = await newRepo({ withExamples: false });
  });
  afterAll(async () => {
    await server.close();
    await github.close();
    repo.cleanup();
    runner.cleanup();
  });

  it('refuses, at its file:line, a key-secret of another owner than the repository\'s, and delivers nothing', async () => {
    repo.write('gitops/deploy.yaml', key('github:mallory/exfil/STOLEN'));
    await repo.commit('a key for someone else');
    const r = await push({ command: 'apply' });
    expect(r.code).not.toBe(0);
    expect(r.log).toContain('::error title=teamkeys,file=gitops/deploy.yaml,line=6,');
    expect(r.log).toContain('gitops.management.service/key-secret github:mallory/exfil/STOLEN goes to mallory, which is not among the owners this source may deliver keys to (acme)');
    expect(github.secrets.size).toBe(0);
    expect((await server.fetch(`${server.api}/ownedaccesskeys/deploy-ci`)).status).toBe(404);
  });

  it('names the owners in the plan, and delivers to an owner the key-secret-owners input lists', async () => {
    repo.write('gitops/deploy.yaml', key('github:acme/payments/DEPLOY_KEY'));
    await repo.commit('a key for acme');
    const planned = await push({ command: 'plan' });
    expect(planned.code, planned.log).toBe(0);
    expect(planned.summary).toContain('Keys are delivered (key-secret) only to GitHub owners: `acme`');
    repo.write('gitops/deploy.yaml', key('github:acme-two/payments/DEPLOY_KEY'));
    await repo.commit('a key for the other organization');
    const applied = await push({ command: 'apply', 'key-secret-owners': 'acme, acme-two' });
    expect(applied.code, applied.log).toBe(0);
    expect(applied.summary).toContain('Keys are delivered (key-secret) only to GitHub owners: `acme`, `acme-two`');
    expect(github.secrets.has('acme-two/payments/DEPLOY_KEY')).toBe(true);
  });
});
