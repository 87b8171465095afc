/**
 * review-ops: on a pull_request event the Action treats the source as untrusted (withholds live
 * values) but still runs `command: apply`: a pull request that points key-secret at its author's
 * repository gets the key rotated and its new value delivered there (and the value CI holds
 * revoked at once). The Action knows the event: it should refuse apply on pull_request.
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

describe('the Action on a pull request', () => {
  const clock = new ManualClock(Date.now() - 31 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let repo: Repo;
  let runner: string;

  /** The action as a runner starts it for a `schedule` event, every input as INPUT_<NAME>. */
  async function runAction(inputs: Record<string, string>, event = 'schedule') {
    const dir = mkdtempSync(join(runner, 'step-'));
    const files = { output: join(dir, 'output'), summary: join(dir, 'summary'), event: join(dir, 'event.json') };
    for (const f of Object.values(files)) writeFileSync(f, f === files.event ? (event === 'pull_request' ? JSON.stringify({ action: 'synchronize', number: 7, pull_request: { number: 7, head: { sha: 'abc' }, base: { sha: 'def' } }, repository: { name: 'platform-teams', owner: { login: 'acme' } } }) : JSON.stringify({ schedule: '0 3 * * *' })) : '');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      RUNNER_TEMP: dir,
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: repo.dir,
      GITHUB_OUTPUT: files.output,
      GITHUB_STEP_SUMMARY: files.summary,
      GITHUB_EVENT_NAME: event,
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
