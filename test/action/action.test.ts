import { spawnSync } from 'node:child_process';
import { parse } from 'yaml';
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../support/cli.js';
import { actionRunner, actionYml, pullRequestPayload, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { kubectl, startServe, type Served } from '../server/serve-process.js';
import { startFakeGitHub, type FakeGitHub } from './github-api.js';

const githubToken = 'ghs_workflowTokenForTheTest0123456789';
const pr = 7;

describe('the bundled GitHub Action in a simulated runner', () => {
  let served: Served;
  let repo: Repo;
  let github: FakeGitHub;
  let runner: ActionRunner;

  /**
   * Runs the action as a runner does (test/support/action-runner.ts): an apply step on the push
   * that merged the pull request (apply is refused on a pull request), anything else on the
   * pull_request event whose base is the last commit (what it changes is in the work tree).
   */
  async function runAction(inputs: Record<string, string>, onPush = inputs.command === 'apply') {
    const base = { ref: 'main', sha: (await repo.git.revparse(['HEAD'])).trim() };
    const push = onPush;
    const repository = { name: 'platform-teams', owner: { login: 'acme' } };
    return runner.run({
      workspace: repo.dir,
      event: push ? 'push' : 'pull_request',
      payload: push ? { ref: 'refs/heads/main', after: base.sha, repository } : pullRequestPayload(base),
      inputs,
      inputDefaults: { 'github-token': githubToken },
      apiUrl: github.url,
      env: { GITHUB_SERVER_URL: 'https://github.example', GITHUB_RUN_ID: '4242' },
    });
  }

  const server = () => ({ server: served.url, token: served.adminKey, 'ca-cert': readFileSync(join(served.dir, 'tls/cert.pem'), 'utf8'), 'source-id': 'ci', source: 'gitops' });
  const commentCalls = () => github.calls.filter((c) => c.method !== 'GET');

  beforeAll(async () => {
    served = await startServe();
    github = await startFakeGitHub('acme', 'platform-teams', pr);
    // A fresh copy of the action: action.yml and its bundle, no node_modules, no package.json.
    runner = actionRunner();
    repo = await newRepo({ withExamples: false });
    for (const f of ['teams/platform.yaml', 'teams/auditors.yaml', 'accesskeys/ci.yaml']) repo.write(`gitops/${f}`, readFileSync(join(root, 'examples/gitops', f), 'utf8'));
    await repo.commit('manifests');
  });
  afterAll(async () => {
    await served.stop();
    await github.close();
    repo.cleanup();
    runner.cleanup();
  });

  it('runs on the current Node runtime for actions, from one bundled file', () => {
    expect(actionYml.runs).toEqual({ using: 'node24', main: 'dist-action/index.mjs' });
    const bundle = readFileSync(join(root, 'dist-action/index.mjs'), 'utf8');
    expect(bundle).not.toContain('better-sqlite3');
  });

  it('plans: masks both tokens first, sets outputs, writes the summary, and comments once on the pull request', async () => {
    const r = await runAction({ command: 'plan', ...server() });
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 2).sort()).toEqual([`::add-mask::${githubToken}`, `::add-mask::${served.adminKey}`].sort());
    expect(lines.slice(2).join('\n')).not.toContain(served.adminKey);
    expect(lines.slice(2).join('\n')).not.toContain(githubToken);
    // The reports go to the runner's temporary folder, outside the checkout.
    expect(r.outputs).toMatchObject({ outcome: 'changes', changes: '5', drift: '0', 'report-json': join(r.runnerTemp, 'teamkeys-report/report.json') });
    expect(existsSync(join(repo.dir, 'teamkeys-report'))).toBe(false);
    expect(r.summary).toContain('## teamkeys plan: 5 to create');
    expect(commentCalls()).toHaveLength(1);
    const [created] = commentCalls();
    expect(created).toMatchObject({ method: 'POST', path: `/repos/acme/platform-teams/issues/${pr}/comments`, authorization: `token ${githubToken}` });
    expect(created!.body!.body).toMatch(/^<!-- teamkeys-plan source="ci" -->\n## teamkeys plan: 5 to create/);
    // What a new object grants is on the comment, not just that it is new.
    expect(created!.body!.body).toContain('| create | Team/platform | `gitops/teams/platform.yaml:2:1` | new object<br>`spec.displayName`: `Platform`<br>');
    expect(created!.body!.body).toContain('`spec.clusterRoles`: `[{"name":"management-admin"}]`');
    expect(created!.body!.body).toContain('The whole report, with every object, is in the [job summary](https://github.example/acme/platform-teams/actions/runs/4242)');
    expect(r.stdout).toContain(`pull request comment created: https://github.example/acme/platform-teams/pull/${pr}#issuecomment-100`);
  });

  it('applies; a later plan edits the same comment with the drift and who made it', async () => {
    expect((await runAction({ command: 'apply', comment: 'false', ...server() })).outputs.outcome).toBe('applied');
    expect(kubectl(served, ['patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"displayName":"X"}}']).code).toBe(0);
    // The server input without its path (https://host:port), as users write it: the audit trail is still read.
    const r = await runAction({ command: 'plan', 'fail-on-drift': 'true', ...server(), server: new URL(served.url).origin });
    expect(r.code).toBe(1);
    expect(r.summary).not.toContain('attribution unavailable');
    expect(r.outputs.drift).toBe('1');
    expect(r.stdout).toContain('::error::1 object(s) drifted from git (see the job summary)');
    expect(commentCalls().map((c) => `${c.method} ${c.path}`)).toEqual([`POST /repos/acme/platform-teams/issues/${pr}/comments`, 'PATCH /repos/acme/platform-teams/issues/comments/100']);
    const body = github.comments.get(100)!;
    // Drift is named by person (the server's audit trail), with the field that changed.
    expect(body).toContain('| update (drift) | Team/platform | `gitops/teams/platform.yaml:2:1` | **drift**: changed spec.displayName: admin (key admin) via kubectl-patch at ');
    expect(body).toContain('<br>`spec.displayName`: `X` → `Platform` | admin (key admin) via kubectl-patch at ');
    expect(github.comments.get(1)).toBe('LGTM, a comment by a person');
    expect(github.comments.size).toBe(2);
    expect(r.stdout).toContain(`pull request comment updated: https://github.example/acme/platform-teams/pull/${pr}#issuecomment-100`);
  });

  it('a saved plan from a plan step (on a trusted event: a pull request\'s is never applied) is what a later apply step applies', async () => {
    kubectl(served, ['patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"displayName":"Platform"}}']);
    repo.write('gitops/teams/auditors.yaml', readFileSync(join(repo.dir, 'gitops/teams/auditors.yaml'), 'utf8').replace('Read-only access', 'Read access'));
    const planned = await runAction({ command: 'plan', 'plan-file': 'teamkeys.plan.json', comment: 'false', ...server() }, true);
    expect(planned.outputs['plan-file']).toBe(join(repo.dir, 'teamkeys.plan.json'));
    // The apply job has no source in the plan's place: only the file.
    const applied = await runAction({ command: 'apply', 'plan-file': 'teamkeys.plan.json', comment: 'false', ...server(), source: 'nowhere' });
    expect(applied.code).toBe(0);
    expect(applied.outputs).toMatchObject({ outcome: 'applied', changes: '1' });
    expect(kubectl(served, ['get', 'team', 'auditors', '-o', 'jsonpath={.spec.description}']).stdout).toContain('Read access');
  });

  it('policy violations fail the step, annotate the manifest and reach the comment', async () => {
    cpSync(join(root, 'examples/policies'), join(repo.dir, 'policies'), { recursive: true });
    // The examples satisfy their policies; a team without an owner does not.
    repo.write('gitops/teams/ownerless.yaml', '# no owner\napiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ownerless\nspec:\n  displayName: Ownerless\n');
    await repo.commit('policies');
    const r = await runAction({ command: 'plan', policy: 'policies', ...server() });
    expect(r.code).toBe(1);
    expect(r.outputs.outcome).toBe('invalid');
    expect(r.stdout).toContain('::error title=teamkeys,file=gitops/teams/ownerless.yaml,line=2,col=1::Team/ownerless violates policy "team-has-owner"');
    expect(github.comments.get(100)).toContain('violates policy "team-has-owner": every Team needs spec.owner');
  });

  it('on a pull request, policies are read from its base commit: weakening or deleting the policy it breaks changes nothing', async () => {
    // The pull request's checkout: the policy made always true, then the whole folder gone.
    repo.write('policies/team-owner.yaml', readFileSync(join(repo.dir, 'policies/team-owner.yaml'), 'utf8').replace(/expression: .*/, 'expression: "true"'));
    const weakened = await runAction({ command: 'plan', policy: 'policies', comment: 'false', ...server() });
    expect(weakened.code).toBe(1);
    expect(weakened.stdout).toContain('Team/ownerless violates policy "team-has-owner"');
    rmSync(join(repo.dir, 'policies'), { recursive: true });
    const deleted = await runAction({ command: 'plan', policy: 'policies', comment: 'false', ...server() });
    expect(deleted.code).toBe(1);
    expect(deleted.stdout).toContain('Team/ownerless violates policy "team-has-owner"');
    // policy-ref names another ref: the policies there apply (here: the commit before them, which has none).
    const before = (await repo.git.revparse(['HEAD~1'])).trim();
    const elsewhere = await runAction({ command: 'plan', policy: 'policies', 'policy-ref': before, comment: 'false', ...server() });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.summary).toContain(`- \`policies:1:1\`: no such folder at ${before} (policy-ref)`);
    repo.remove('policies');
    repo.remove('gitops/teams/ownerless.yaml');
    await repo.commit('no policies');
  });

  it('a pull request naming a live object with sync-strategy: replace sees the paths of the live fields it does not name, not their values or writers', async () => {
    const finance = { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'finance', labels: { cost: 'cc-4711' } }, spec: { displayName: 'Finance', description: 'Payroll, budget 2027', users: ['fiona', 'frank'], groups: ['finance-secret-group'] } };
    expect(kubectl(served, ['create', '-f', '-'], { input: JSON.stringify(finance) }).code).toBe(0);
    repo.write('gitops/teams/finance.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: finance\n  annotations:\n    gitops.management.service/sync-strategy: replace\nspec:\n  displayName: Finance team\n');
    const r = await runAction({ command: 'plan', ...server() });
    repo.remove('gitops/teams/finance.yaml');
    expect(r.code).toBe(0);
    const body = github.comments.get(100)!;
    // The table's row (the sync-strategy it adds is listed on its own above the table, too).
    expect(body).toContain('- Team/finance: `sync-strategy` (unset) → `replace`');
    const row = body.split('\n').find((l) => l.startsWith('|') && l.includes('Team/finance'))!;
    // The field the manifest names shows both values; the rest only their paths.
    expect(row).toContain('`spec.displayName`: `Finance` → `Finance team`');
    for (const path of ['spec.description', 'spec.users', 'spec.groups', 'metadata.labels.cost']) expect(row).toContain(`\`${path}\`: differs; live value not shown (the manifest does not name this field)`);
    for (const secret of ['Payroll', 'fiona', 'frank', 'finance-secret-group', 'cc-4711']) {
      expect(body).not.toContain(secret);
      expect(r.summary).not.toContain(secret);
      expect(readFileSync(r.outputs['report-json']!, 'utf8')).not.toContain(secret);
    }
    expect(kubectl(served, ['delete', 'team', 'finance']).code).toBe(0);
  });

  it('a field named like another source\'s comment marker plants nothing: that source still gets its own comment', async () => {
    repo.write('gitops/teams/marker.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: marker\nspec:\n  "<!-- teamkeys-plan source=\\"other\\" -->": 1\n');
    const hostile = await runAction({ command: 'plan', ...server() });
    repo.remove('gitops/teams/marker.yaml');
    expect(hostile.code).toBe(1);
    const ours = github.comments.get(100)!;
    expect(ours).toContain('unknown field "spec.&lt;!-- teamkeys-plan source="other" --&gt;"');
    expect(ours.match(/<!--/g)).toHaveLength(1);
    const before = new Map(github.comments);
    const other = await runAction({ command: 'plan', ...server(), 'source-id': 'other' });
    expect(other.code).toBe(0);
    expect(github.comments.get(100)).toBe(before.get(100));
    const added = [...github.comments.keys()].filter((id) => !before.has(id));
    expect(added).toHaveLength(1);
    expect(github.comments.get(added[0]!)).toMatch(/^<!-- teamkeys-plan source="other" -->\n/);
  });

  it('annotates the first 10 errors only and counts the rest in the summary', async () => {
    const broken = Array.from({ length: 13 }, (_, i) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: broken-${i}\nspec:\n  users: ana\n`).join('---\n');
    repo.write('gitops/teams/broken.yaml', broken);
    const r = await runAction({ command: 'validate', source: 'gitops', comment: 'false' });
    expect(r.code).toBe(1);
    const annotations = r.stdout.split('\n').filter((l) => l.startsWith('::error title=teamkeys'));
    expect(annotations).toHaveLength(10);
    expect(annotations[0]).toContain('::error title=teamkeys,file=gitops/teams/broken.yaml,line=6,col=10::spec.users: Invalid value: "string"');
    expect(r.summary).toContain('3 more error(s) are not annotated (GitHub shows 10 per step); all 13 are listed above.');
    expect(r.summary.match(/`gitops\/teams\/broken\.yaml:\d+:10`/g)).toHaveLength(13);
    repo.remove('gitops/teams/broken.yaml');
  });

  it('a plan too long for a comment is cut under 65,536 characters, pointing to the job summary that has it all', async () => {
    const many = Array.from({ length: 900 }, (_, i) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: generated-team-with-a-long-name-${String(i).padStart(4, '0')}\nspec:\n  displayName: Team ${i}\n`).join('---\n');
    repo.write('gitops/teams/many.yaml', many);
    const r = await runAction({ command: 'plan', ...server() });
    expect(r.code).toBe(0);
    const body = github.comments.get(100)!;
    expect(body.length).toBeLessThanOrEqual(65_536);
    expect(body).toMatch(/\*\*The plan is too long for a pull request comment \(\d+ characters\): it was cut here\.\*\* Read the whole report in the \[job summary\]\(https:\/\/github\.example\/acme\/platform-teams\/actions\/runs\/4242\)\.\n$/);
    expect(body).not.toContain('generated-team-with-a-long-name-0899');
    expect(r.summary).toContain('Team/generated-team-with-a-long-name-0899');
    repo.remove('gitops/teams/many.yaml');
  });

  it('with source: . a plan then an apply in one workspace never read their own report or saved plan as manifests', async () => {
    repo.write('gitops/teams/auditors.yaml', readFileSync(join(repo.dir, 'gitops/teams/auditors.yaml'), 'utf8').replace('Read access', 'Reading access'));
    // The reports in the checkout, as report-dir's former default put them, and the saved plan beside them.
    const inSource = { ...server(), source: '.', comment: 'false', 'report-dir': 'teamkeys-report' };
    const planned = await runAction({ command: 'plan', 'plan-file': 'teamkeys.plan.json', ...inSource });
    expect(planned.stdout).not.toContain('::error');
    expect(planned.outputs).toMatchObject({ outcome: 'changes', changes: '1', 'report-json': join(repo.dir, 'teamkeys-report/report.json') });
    expect(existsSync(join(repo.dir, 'teamkeys.plan.json'))).toBe(true);
    const applied = await runAction({ command: 'apply', ...inSource });
    expect(applied.stdout).not.toContain('unknown kind');
    expect(applied.code).toBe(0);
    expect(applied.outputs).toMatchObject({ outcome: 'applied', changes: '1' });
    const again = await runAction({ command: 'plan', ...server(), source: '.', comment: 'false' });
    expect(again.code).toBe(0);
    expect(again.outputs.outcome).toBe('clean');
    expect(again.stdout).toContain(`report in ${join(again.runnerTemp, 'teamkeys-report')}`);
  });

  it('rebuilding the bundle gives the same bytes as the committed one', () => {
    const out = join(runner.action, '..', 'rebuilt.mjs');
    const r = spawnSync(process.execPath, [join(root, 'scripts/build-action.mjs'), '--outfile', out], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readFileSync(out).equals(readFileSync(join(root, 'dist-action/index.mjs'))), 'dist-action/index.mjs is stale: run npm run build:action and commit it').toBe(true);
  });

  it('the example workflow uses only inputs the action declares', () => {
    const workflow = parse(readFileSync(join(root, 'examples/github/teamkeys.yml'), 'utf8')) as { jobs: Record<string, { steps: { uses?: string; with?: Record<string, string> }[] }> };
    const used = Object.values(workflow.jobs).flatMap((j) => j.steps.filter((s) => s.uses?.includes('teamkeys')).flatMap((s) => Object.keys(s.with ?? {})));
    expect(used).toEqual(expect.arrayContaining(['policy', 'plan-file']));
    for (const name of used) expect(Object.keys(actionYml.inputs)).toContain(name);
  });
});
