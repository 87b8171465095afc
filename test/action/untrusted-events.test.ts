/**
 * Issue 42, point 2: only pull_request and pull_request_target were treated as untrusted. On
 * workflow_run the policies came from the pull request's checkout (a deleted policy was not
 * enforced), live values appeared in the summary, and apply replaced a live Team; on
 * pull_request_review (and by the code issue_comment, merge_group) apply ran too. Trust is now
 * decided from an explicit list of trusted events (trusted-events), every other event being a
 * pull request's. The bundled Action, run as a runner runs it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { simpleGit } from 'simple-git';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRunner, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startGitHubStandIn, type GitHubStandIn } from '../gitops/github-standin.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { root } from '../support/cli.js';

const team = (name: string, spec: string, annotations = '') =>
  `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\n${annotations ? `  annotations:\n${annotations}` : ''}spec:\n${spec}`;

describe('the Action on events that are not in trusted-events', () => {
  let server: InProcess;
  let github: GitHubStandIn;
  let repo: Repo;
  let runner: ActionRunner;
  let base: string;

  const run = (event: string, payload: object, inputs: Record<string, string>) =>
    runner.run({ workspace: repo.dir, event, payload, inputs: { server: server.base, token: adminKey, source: 'gitops', 'source-id': 'ci', comment: 'false', 'github-token': github.token, ...inputs }, apiUrl: github.url });
  const liveTeam = async (name: string) => (await (await server.fetch(`${server.api}/teams/${name}`)).json()) as { spec: Record<string, unknown>; metadata: { resourceVersion: string } };

  beforeAll(async () => {
    server = await startInProcess();
    github = await startGitHubStandIn();
    runner = actionRunner();
    repo = await newRepo({ withExamples: false });
    // The base branch: a policy every Team must meet, and platform as git has it.
    repo.write('policies/team-owner.yaml', readFileSync(join(root, 'examples/policies/team-owner.yaml'), 'utf8'));
    repo.write('gitops/platform.yaml', team('platform', '  owner:\n    user: olga\n  users: [carla]\n'));
    await repo.commit('base');
    base = (await repo.git.revparse(['HEAD'])).trim();
    const applied = await run('push', { ref: 'refs/heads/main' }, { command: 'apply' });
    expect(applied.code, applied.log).toBe(0);
    // Someone else's change live, in a field git does not name: a confidential description.
    const res = await server.fetch(`${server.api}/teams/platform?fieldManager=kubectl-edit`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { description: 'confidential: merger with acme-two' } }),
    });
    expect(res.status).toBe(200);
    // The pull request: the policy deleted, platform replaced whole with a management-admin grant.
    repo.remove('policies/team-owner.yaml');
    repo.write(
      'gitops/platform.yaml',
      team('platform', '  users: [carla, mallory]\n  clusterRoles: [{ name: management-admin }]\n', '    gitops.management.service/sync-strategy: replace\n'),
    );
    await repo.commit('pull request');
  });
  afterAll(async () => {
    await server.close();
    await github.close();
    repo.cleanup();
    runner.cleanup();
  });

  const untrusted: [string, object][] = [
    ['workflow_run', { workflow_run: { head_sha: 'abc', event: 'pull_request', pull_requests: [] } }],
    ['pull_request_review', { review: { state: 'approved' }, pull_request: { number: 7, base: { sha: 'def' } } }],
    ['issue_comment', { comment: { body: '/apply' }, issue: { number: 7, pull_request: {} } }],
    ['merge_group', { merge_group: { base_sha: 'def', head_sha: 'abc' } }],
    ['some_future_event', {}],
  ];

  it.each(untrusted)('refuses apply on %s, and the live Team is not replaced', async (event, payload) => {
    const before = await liveTeam('platform');
    const r = await run(event, payload, { command: 'apply' });
    expect(r.code).not.toBe(0);
    expect(r.log).toContain(`command: apply is refused on a ${event} event: it is not in trusted-events`);
    const after = await liveTeam('platform');
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.clusterRoles).toBeUndefined();
  });

  it('plans a workflow_run with the policies of policy-ref, not of the checkout, and withholds live values from the summary', async () => {
    const r = await run('workflow_run', untrusted[0]![1], { command: 'plan', policy: 'policies', 'policy-ref': base });
    expect(r.code).not.toBe(0);
    expect(r.log).toContain('Team/platform violates policy "team-has-owner"');
    expect(r.log).toContain('the workflow_run event is not in trusted-events: pull-request mode');
    const planned = await run('workflow_run', untrusted[0]![1], { command: 'plan' });
    expect(planned.code, planned.log).toBe(0);
    expect(planned.summary).toContain('`spec.description`: differs; live value not shown');
    expect(planned.summary).not.toContain('confidential');
    expect(`${planned.log}${readFileSync(planned.outputs['report-json']!, 'utf8')}`).not.toContain('confidential');
  });

  it('a plan file saved on a pull request holds no managedFields or live value, and is never applied', async () => {
    // Point 3: the pull request adds sync-strategy: replace and ignores the description.
    repo.write('gitops/platform.yaml', team('platform', '  users: [carla, mallory]\n', '    gitops.management.service/sync-strategy: replace\n    gitops.management.service/ignore-fields: spec.description\n'));
    await repo.commit('pull request: replace, ignoring the description');
    const pr = { number: 7, pull_request: { number: 7, head: { sha: 'abc' }, base: { sha: base } } };
    const planned = await run('pull_request', pr, { command: 'plan', 'plan-file': 'teamkeys.plan.json' });
    expect(planned.code, planned.log).toBe(0);
    const saved = readFileSync(join(repo.dir, 'teamkeys.plan.json'), 'utf8');
    expect(saved).toContain('"withheld": true');
    // The writer of a field the manifest names may be shown (docs/action.md), so not its manager's name: no managedFields.
    for (const live of ['confidential', 'managedFields', 'creationTimestamp', 'resourceVersion', 'digest']) expect(saved).not.toContain(live);
    const before = await liveTeam('platform');
    const applied = await run('push', { ref: 'refs/heads/main' }, { command: 'apply', 'plan-file': 'teamkeys.plan.json' });
    expect(applied.code).not.toBe(0);
    expect(applied.summary).toContain('the plan was saved in pull-request mode (live values withheld, as in its report): it is for review and is never applied');
    expect((await liveTeam('platform')).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('a skip reason in a pull request\'s plan does not name the source managing a live object', async () => {
    const created = await server.fetch(`${server.api}/teams`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'billing', annotations: { 'gitops.management.service/source': 'finance-private-repo' } }, spec: { users: ['fiona'] } }),
    });
    expect(created.status).toBe(201);
    repo.write('gitops/billing.yaml', team('billing', '  owner:\n    user: mallory\n  users: [mallory]\n'));
    await repo.commit('pull request: claim billing');
    const pr = { number: 7, pull_request: { number: 7, head: { sha: 'abc' }, base: { sha: base } } };
    const planned = await run('pull_request', pr, { command: 'plan' });
    expect(planned.code, planned.log).toBe(0);
    expect(planned.summary).toContain('- Team/billing: managed by another source (which one is not shown in a pull request)');
    expect(`${planned.summary}${planned.log}${readFileSync(planned.outputs['report-json']!, 'utf8')}`).not.toContain('finance-private-repo');
    const pushed = await run('push', { ref: 'refs/heads/main' }, { command: 'plan' });
    expect(pushed.summary).toContain('- Team/billing: managed by another source (finance-private-repo)');
    repo.remove('gitops/billing.yaml');
    await repo.commit('pull request: billing dropped');
  });

  it('an untrusted event naming no base commit needs policy-ref: the checkout is never read for policies', async () => {
    const r = await run('workflow_run', untrusted[0]![1], { command: 'validate', policy: 'policies' });
    expect(r.code).not.toBe(0);
    expect(r.log).toContain('the workflow_run event is not trusted (trusted-events) and names no base commit: set the policy-ref input');
  });

  it('refuses a trusted-events input listing an event a pull request controls', async () => {
    const r = await run('workflow_run', untrusted[0]![1], { command: 'plan', 'trusted-events': 'push, workflow_run' });
    expect(r.code).not.toBe(0);
    expect(r.log).toContain('trusted-events may not list workflow_run');
  });

  // Found by a review (stop 63): Number("unlimited") is NaN, which no count of deletes exceeds.
  it('refuses a max-prune input that is not a whole number, before anything is read', async () => {
    for (const bad of ['unlimited', '50,', '-1', '1e3']) {
      const r = await run('push', { ref: 'refs/heads/main' }, { command: 'plan', prune: 'true', 'max-prune': bad });
      expect(r.code, bad).not.toBe(0);
      expect(r.log).toContain(`::error::the max-prune input must be a whole number of at least 0, not ${JSON.stringify(bad)}`);
    }
  });

  // Found in review (stop 62): a push was trusted whatever its ref, so a workflow listening to
  // `push` without a branch filter applied a feature branch nobody had reviewed over main.
  describe('a trusted event on a ref other than the default branch (trusted-refs)', () => {
    beforeAll(async () => {
      repo.write('gitops/platform.yaml', team('platform', '  users: [carla, mallory]\n  clusterRoles: [{ name: management-admin }]\n', '    gitops.management.service/sync-strategy: replace\n'));
      await repo.commit('feature: platform replaced whole, without its owner');
      // The checkout is the feature branch; main, the default branch, is the reviewed base with its policy.
      await repo.git.checkout(['-b', 'feature']);
      await repo.git.branch(['-f', 'main', base]);
      // The default branch's policies are read from origin: here, the repository itself.
      await repo.git.addRemote('origin', `file://${repo.dir}`);
    });

    it('refuses apply on a push to a feature branch, naming the ref and trusted-refs, and the live Team is not replaced', async () => {
      const before = await liveTeam('platform');
      const r = await run('push', { ref: 'refs/heads/feature' }, { command: 'apply' });
      expect(r.code).not.toBe(0);
      expect(r.log).toContain('command: apply is refused on this push run: refs/heads/feature is not the default branch (refs/heads/main), the only ref trusted while trusted-refs is not set');
      const after = await liveTeam('platform');
      expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      expect(after.spec.clusterRoles).toBeUndefined();
    });

    it('goes by GITHUB_REF, not by a ref the payload names', async () => {
      const r = await runner.run({ workspace: repo.dir, event: 'push', payload: { ref: 'refs/heads/main' }, ref: 'refs/heads/feature', inputs: { server: server.base, token: adminKey, source: 'gitops', 'source-id': 'ci', comment: 'false', command: 'apply' }, apiUrl: github.url });
      expect(r.code).not.toBe(0);
      expect(r.log).toContain('command: apply is refused on this push run: refs/heads/feature is not the default branch (refs/heads/main)');
      expect((await liveTeam('platform')).spec.clusterRoles).toBeUndefined();
    });

    it('plans a push to a feature branch in pull-request mode: policies from the default branch, live values withheld', async () => {
      const r = await run('push', { ref: 'refs/heads/feature', before: base }, { command: 'plan', policy: 'policies' });
      // The key scan covers what the push changed, as on a trusted push: the payload is GitHub's.
      expect(r.log).toContain(`scanned files changed since ${base.slice(0, 12)} for access keys: 0 found`);
      expect(r.log).toContain("the push run's ref is not trusted: refs/heads/feature is not the default branch (refs/heads/main), the only ref trusted while trusted-refs is not set: pull-request mode");
      // The feature branch deleted the policy; main's copy is read, and the missing owner is caught.
      expect(r.code).not.toBe(0);
      expect(r.log).toContain('Team/platform violates policy "team-has-owner"');
      const planned = await run('workflow_dispatch', { ref: 'refs/heads/feature', inputs: {} }, { command: 'plan' });
      expect(planned.code, planned.log).toBe(0);
      expect(planned.summary).toContain('`spec.description`: differs; live value not shown');
      expect(`${planned.summary}${planned.log}${readFileSync(planned.outputs['report-json']!, 'utf8')}`).not.toContain('confidential');
    });

    it('trusts a ref trusted-refs lists by pattern (release/*), reading its checkout and live values', async () => {
      const r = await run('push', { ref: 'refs/heads/release/1' }, { command: 'plan', 'trusted-refs': 'main, release/*' });
      expect(r.code, r.log).toBe(0);
      expect(r.log).not.toContain('pull-request mode');
      expect(r.summary).toContain('confidential: merger with acme-two');
      const other = await run('push', { ref: 'refs/heads/releases' }, { command: 'apply', 'trusted-refs': 'main, release/*' });
      expect(other.code).not.toBe(0);
      expect(other.log).toContain('command: apply is refused on this push run: refs/heads/releases is not in trusted-refs (refs/heads/main, refs/heads/release/*)');
    });

    it('fails closed when the payload names no default branch, and refuses a trusted-refs input that is no ref pattern', async () => {
      const r = await runner.run({ workspace: repo.dir, event: 'workflow_dispatch', payload: { ref: 'refs/heads/main' }, asIs: true, inputs: { server: server.base, token: adminKey, source: 'gitops', 'source-id': 'ci', comment: 'false', command: 'apply' }, apiUrl: github.url });
      expect(r.code).not.toBe(0);
      expect(r.log).toContain("command: apply is refused on this workflow_dispatch run: the workflow_dispatch event's payload names no default branch to compare refs/heads/main with: set trusted-refs");
      const unread = await runner.run({ workspace: repo.dir, event: 'push', payload: { ref: 'refs/heads/feature' }, asIs: true, inputs: { server: server.base, token: adminKey, source: 'gitops', 'source-id': 'ci', comment: 'false', command: 'plan', policy: 'policies' }, apiUrl: github.url });
      expect(unread.code).not.toBe(0);
      expect(unread.log).toContain("this push run is not trusted (the push event's payload names no default branch to compare refs/heads/feature with: set trusted-refs) and the payload names no default branch to read policies from: set the policy-ref input");
      const bad = await run('push', { ref: 'refs/heads/main' }, { command: 'validate', 'trusted-refs': 'ma*in, refs/heads/a..b' });
      expect(bad.code).not.toBe(0);
      expect(bad.log).toContain('trusted-refs lists "ma*in", "refs/heads/a..b", which are no ref patterns');
    });

    it('reads the default branch\'s policies from origin, one commit deep, never from a local branch of that name', async () => {
      // What actions/checkout leaves: a one-commit clone of the feature branch. The job (or a reused
      // workspace) then has a local main at the feature's commit, whose policy folder is gone.
      const ws = mkdtempSync(join(tmpdir(), 'teamkeys-checkout-'));
      try {
        await simpleGit().clone(`file://${repo.dir}`, ws, ['--depth', '1', '--branch', 'feature']);
        await simpleGit(ws).branch(['main', 'HEAD']);
        const r = await runner.run({ workspace: ws, event: 'push', payload: { ref: 'refs/heads/feature' }, inputs: { server: server.base, token: adminKey, source: 'gitops', 'source-id': 'ci', comment: 'false', command: 'plan', policy: 'policies' }, apiUrl: github.url });
        expect(r.code).not.toBe(0);
        expect(r.log).toContain('Team/platform violates policy "team-has-owner"');
        expect(r.log).not.toContain('no such folder');
        expect((await simpleGit(ws).raw(['rev-list', '--count', 'FETCH_HEAD'])).trim()).toBe('1');
      } finally {
        rmSync(ws, { recursive: true, force: true });
      }
    });
  });
});
