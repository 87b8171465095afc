/**
 * One repository, three readers that must agree: the CLI in a clone, the GitHub Action with the
 * example workflow's inputs, and the sidecar. They name files from the repository root and use
 * the same default source id, so a first Action plan after CLI applies has nothing to do (no
 * update that only rewrites the source annotation). A real temp git repository with a GitHub
 * origin, a served process, and the committed Action bundle run as a runner runs it.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Report } from '../../src/gitops/report/report.js';
import { root, teamkeys } from '../support/cli.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { eventually } from '../support/eventually.js';
import { startServe, type Served } from '../support/serve-process.js';

interface Step {
  uses?: string;
  with?: Record<string, string>;
}
const workflow = parse(readFileSync(join(root, 'examples/github/teamkeys.yml'), 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
const actionInputs = (parse(readFileSync(join(root, 'action.yml'), 'utf8')) as { inputs: Record<string, { default?: string }> }).inputs;

describe('the CLI, the Action and the sidecar on one repository', () => {
  let served: Served;
  let repo: Repo;
  let runner: string;
  const serverFlags = () => ['--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')];

  /** The bundle as a runner starts it, on a push event (no pull request comment), with these inputs. */
  async function runAction(inputs: Record<string, string>) {
    const dir = mkdtempSync(join(runner, 'step-'));
    const output = join(dir, 'output');
    writeFileSync(output, '');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      RUNNER_TEMP: dir,
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: repo.dir,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: join(dir, 'summary'),
      GITHUB_EVENT_NAME: 'push',
      GITHUB_REF: 'refs/heads/main',
      GITHUB_EVENT_PATH: join(dir, 'event.json'),
      GITHUB_REPOSITORY: 'acme/platform-teams',
    };
    writeFileSync(env.GITHUB_EVENT_PATH!, JSON.stringify({ ref: 'refs/heads/main', repository: { default_branch: 'main' } }));
    writeFileSync(env.GITHUB_STEP_SUMMARY!, '');
    for (const [name, spec] of Object.entries(actionInputs)) env[`INPUT_${name.toUpperCase()}`] = inputs[name] ?? (name === 'github-token' ? '' : (spec.default ?? ''));
    const code = await new Promise<number | null>((done) => {
      const child = spawn(process.execPath, [join(root, 'dist-action/index.mjs')], { cwd: repo.dir, env, timeout: 60_000, stdio: 'ignore' });
      child.on('close', done);
    });
    const outputs: Record<string, string> = {};
    for (const m of readFileSync(output, 'utf8').matchAll(/^([\w-]+)<<(\S+)\n([\s\S]*?)\n\2$/gm)) outputs[m[1]!] = m[3]!;
    return { code, outputs, report: JSON.parse(readFileSync(outputs['report-json']!, 'utf8')) as Report };
  }

  beforeAll(async () => {
    served = await startServe();
    runner = mkdtempSync(join(tmpdir(), 'teamkeys-runner-'));
    repo = await newRepo({ withExamples: false });
    cpSync(join(root, 'examples/gitops'), join(repo.dir, 'gitops'), { recursive: true });
    cpSync(join(root, 'examples/policies'), join(repo.dir, 'policies'), { recursive: true });
    await repo.commit('manifests and policies, as the example workflow expects them');
    // What actions/checkout leaves as origin; a laptop clone over ssh normalizes to the same.
    await repo.git.addRemote('origin', 'https://github.com/acme/platform-teams');
  });
  afterAll(async () => {
    await served.stop();
    repo.cleanup();
    rmSync(runner, { recursive: true, force: true });
  });

  it('names files from the repository root, read as a folder or as git', () => {
    const folder = JSON.parse(teamkeys(['plan', '--source', join(repo.dir, 'gitops'), ...serverFlags(), '--output', 'json']).stdout) as Report;
    const git = JSON.parse(teamkeys(['plan', '--source', repo.dir, '--ref', 'HEAD', '--path', 'gitops', ...serverFlags(), '--output', 'json']).stdout) as Report;
    expect(folder.source.id).toBe('github.com/acme/platform-teams/gitops');
    expect(git.source.id).toBe(folder.source.id);
    const files = (r: Report) => r.objects.map((o) => `${o.name} ${o.file}:${o.line}`).sort();
    expect(files(folder)).toContain('platform gitops/teams/platform.yaml:2');
    expect(files(git)).toEqual(files(folder));
  });

  it('after the CLI applied, the Action plan with the example workflow inputs has nothing to do', async () => {
    const applied = teamkeys(['apply', '--source', join(repo.dir, 'gitops'), '--policy', join(repo.dir, 'policies'), '--prune', ...serverFlags()], { cwd: repo.dir });
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(applied.stdout).toContain('Source github.com/acme/platform-teams/gitops');
    const review = workflow.jobs.review!.steps.find((s) => s.uses?.includes('teamkeys') && s.with?.command === 'plan')!.with!;
    expect(review['source-id']).toBeUndefined();
    const inputs = { ...review, server: served.url, token: served.adminKey, 'ca-cert': readFileSync(join(served.dir, 'tls/cert.pem'), 'utf8') };
    const r = await runAction(inputs);
    expect(r.code).toBe(0);
    expect(r.outputs).toMatchObject({ outcome: 'clean', changes: '0', drift: '0' });
    expect(r.report.source.id).toBe('github.com/acme/platform-teams/gitops');
  });

  it('the sidecar reads the same folder under the same id and names its files the same way', async () => {
    const sidecar = await startServe(['--sync-source', join(repo.dir, 'gitops'), '--sync-interval', '1h']);
    try {
      const file = join(sidecar.dir, 'sync', 'report.json');
      await eventually('the sidecar wrote its sync report', () => existsSync(file), 20_000).catch((err: Error) => {
        throw new Error(`${err.message}:\n${sidecar.stderr()}`);
      });
      const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
      expect(report.source.id).toBe('github.com/acme/platform-teams/gitops');
      expect(report.objects.find((o) => o.name === 'platform')?.file).toBe('gitops/teams/platform.yaml');
    } finally {
      await sidecar.stop();
    }
  });
});
