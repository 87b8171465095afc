/**
 * The bundled Action on a schedule rotates a key that fell due: the new value reaches the
 * repository secret (the stand-in opens it), the job summary shows the rotation, and the value CI
 * still holds keeps working through the overlap.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { root } from '../cli/run.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startGitHubStandIn, type GitHubStandIn } from '../gitops/github-standin.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';
import { day, ManualClock } from '../support/clock.js';

const actionYml = parse(readFileSync(join(root, 'action.yml'), 'utf8')) as { inputs: Record<string, { default?: string }>; runs: { main: string } };

describe('the Action rotates keys on a schedule', () => {
  const clock = new ManualClock(Date.now() - 31 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let repo: Repo;
  let runner: string;

  /** The action as a runner starts it for a `schedule` event, every input as INPUT_<NAME>. */
  async function runAction(inputs: Record<string, string>) {
    const dir = mkdtempSync(join(runner, 'step-'));
    const files = { output: join(dir, 'output'), summary: join(dir, 'summary'), event: join(dir, 'event.json') };
    for (const f of Object.values(files)) writeFileSync(f, f === files.event ? JSON.stringify({ schedule: '0 3 * * *' }) : '');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      RUNNER_TEMP: dir,
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: repo.dir,
      GITHUB_OUTPUT: files.output,
      GITHUB_STEP_SUMMARY: files.summary,
      GITHUB_EVENT_NAME: 'schedule',
      GITHUB_EVENT_PATH: files.event,
      GITHUB_REPOSITORY: 'acme/platform-teams',
      GITHUB_API_URL: github.url,
    };
    for (const [name, spec] of Object.entries(actionYml.inputs)) env[`INPUT_${name.toUpperCase()}`] = inputs[name] ?? (spec.default ?? '');
    const r = await new Promise<{ status: number | null; stdout: string }>((done) => {
      const child = spawn(process.execPath, [join(runner, 'action', actionYml.runs.main)], { cwd: repo.dir, env, timeout: 60_000 });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stdout += d.toString()));
      child.on('close', (status) => done({ status, stdout }));
    });
    return { code: r.status, stdout: r.stdout, summary: readFileSync(files.summary, 'utf8'), output: readFileSync(files.output, 'utf8') };
  }
  const inputs = { command: 'apply', server: '', token: adminKey, source: 'gitops', 'source-id': 'ci-keys', 'github-token': '' };

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    github = await startGitHubStandIn();
    runner = mkdtempSync(join(tmpdir(), 'rotation-runner-'));
    cpSync(join(root, 'action.yml'), join(runner, 'action', 'action.yml'));
    cpSync(join(root, 'dist-action'), join(runner, 'action', 'dist-action'), { recursive: true });
    repo = await newRepo({ withExamples: false });
    repo.write(
      'gitops/deploy.yaml',
      `apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: deploy-ci
  annotations:
    gitops.management.service/key-secret: github:acme/payments/DEPLOY_KEY
    gitops.management.service/rotate-every: 30d
    gitops.management.service/rotation-overlap: 6h
spec:
  user: ci-bot
`,
    );
    await repo.commit('a monthly key');
    Object.assign(inputs, { server: server.base, 'github-token': github.token });
  });
  afterAll(async () => {
    await server.close();
    await github.close();
    repo.cleanup();
    rmSync(runner, { recursive: true, force: true });
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
