/**
 * The bundled Action on a schedule rotates a key that fell due: the new value reaches the
 * repository secret (the stand-in opens it), the job summary shows the rotation, and the value CI
 * still holds keeps working through the overlap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRunner, schedulePayload, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startGitHubStandIn, type GitHubStandIn } from '../gitops/github-standin.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';
import { day, ManualClock } from '../support/clock.js';
import { monthlyKeyYaml } from '../support/manifests.js';


describe('the Action rotates keys on a schedule', () => {
  const clock = new ManualClock(Date.now() - 31 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let repo: Repo;
  let runner: ActionRunner;

  /** The action as a runner starts it for a `schedule` event. */
  const runAction = async (inputs: Record<string, string>) => {
    const r = await runner.run({ workspace: repo.dir, event: 'schedule', payload: schedulePayload, inputs, apiUrl: github.url });
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

  it('delivers the rotated value and shows the rotation in the job summary', async () => {
    const created = await runAction(inputs);
    expect(created.code, created.stdout).toBe(0);
    const first = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    clock.set(Date.now());

    const rotated = await runAction(inputs);
    expect(rotated.code, rotated.stdout).toBe(0);
    const second = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    expect(second).not.toBe(first);
    expect(rotated.summary).toContain('## teamkeys apply: rotated 1');
    expect(rotated.summary).toMatch(/\| rotate → Rotated \| OwnedAccessKey\/deploy-ci \|.*value 31d old, rotate-every 30d\): delivered to `?github:acme\/payments\/DEPLOY_KEY`?; the previous value works until/);
    expect(rotated.output).toMatch(/changes<<\S+\n1\n/);
    for (const v of [first, second]) expect(rotated.stdout + rotated.summary).not.toContain(v);
    for (const v of [first, second]) expect((await fetch(`${server.api}/ownedaccesskeys/deploy-ci`, { headers: { Authorization: `Bearer ${v}` } })).status).toBe(200);
  });
});
