import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { root } from '../cli/run.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { kubectl, startServe, type Served } from '../server/serve-process.js';

/** Runs the action's entry as the runner would: inputs in INPUT_*, files for outputs and summary. */
function runAction(workspace: string, inputs: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-runner-'));
  const outputFile = join(dir, 'output');
  const summaryFile = join(dir, 'summary');
  writeFileSync(outputFile, '');
  writeFileSync(summaryFile, '');
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: dir, GITHUB_WORKSPACE: workspace, GITHUB_OUTPUT: outputFile, GITHUB_STEP_SUMMARY: summaryFile, RUNNER_TEMP: dir };
  for (const [k, v] of Object.entries(inputs)) env[`INPUT_${k.replace(/-/g, '_').toUpperCase()}`] = v;
  const r = spawnSync(process.execPath, [join(root, 'dist/action/main.js')], { cwd: workspace, env, encoding: 'utf8', timeout: 60_000 });
  const raw = readFileSync(outputFile, 'utf8');
  // GITHUB_OUTPUT holds `name<<DELIMITER\nvalue\nDELIMITER` blocks.
  const outputs: Record<string, string> = {};
  for (const m of raw.matchAll(/^([\w-]+)<<(\S+)\n([\s\S]*?)\n\2$/gm)) outputs[m[1]!] = m[3]!;
  const result = { code: r.status, stdout: r.stdout, outputs, summary: readFileSync(summaryFile, 'utf8') };
  rmSync(dir, { recursive: true, force: true });
  return result;
}

describe('the GitHub Action in a simulated runner', () => {
  let served: Served;
  let repo: Repo;
  beforeAll(async () => {
    served = await startServe();
    repo = await newRepo({ withExamples: false });
    for (const f of ['teams/platform.yaml', 'teams/auditors.yaml', 'accesskeys/ci.yaml']) {
      repo.write(`gitops/${f}`, readFileSync(join(root, 'examples/gitops', f), 'utf8'));
    }
    await repo.commit('manifests');
  });
  afterAll(async () => {
    await served.stop();
    repo.cleanup();
  });

  const server = () => ({ server: served.url, token: served.adminKey, 'ca-cert': readFileSync(join(served.dir, 'tls/cert.pem'), 'utf8'), 'source-id': 'ci' });

  it('plans: masks the token, sets outputs, writes the summary', () => {
    const r = runAction(repo.dir, { command: 'plan', source: 'gitops', ...server() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`::add-mask::${served.adminKey}`);
    expect(r.stdout.replace(`::add-mask::${served.adminKey}`, '')).not.toContain(served.adminKey);
    expect(r.outputs).toMatchObject({
      outcome: 'changes',
      changes: '5',
      drift: '0',
      'report-json': join(repo.dir, 'teamkeys-report/report.json'),
      'report-markdown': join(repo.dir, 'teamkeys-report/report.md'),
    });
    expect(r.summary).toContain('## teamkeys plan: 5 to create');
    expect(r.summary).toBe(readFileSync(join(repo.dir, 'teamkeys-report/report.md'), 'utf8'));
  });

  it('applies, and with fail-on-drift fails the step when someone changed a managed object', () => {
    expect(runAction(repo.dir, { command: 'apply', source: 'gitops', ...server() }).outputs.outcome).toBe('applied');
    expect(kubectl(served, ['patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"displayName":"X"}}']).code).toBe(0);
    const r = runAction(repo.dir, { command: 'plan', source: 'gitops', 'fail-on-drift': 'true', ...server() });
    expect(r.code).toBe(1);
    expect(r.outputs.drift).toBe('1');
    expect(r.stdout).toContain('::error::1 object(s) drifted from git (see the job summary)');
    expect(r.summary).toContain('update (drift) | Team/platform');
  });

  it('turns validation errors into file/line annotations and fails', async () => {
    repo.write('gitops/teams/broken.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: broken\nspec:\n  users: ana\n');
    const r = runAction(repo.dir, { command: 'validate', source: 'gitops' });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('::error title=teamkeys,file=gitops/teams/broken.yaml,line=6,col=10::spec.users: Invalid value: "string"');
    expect(r.outputs.outcome).toBe('invalid');
    expect(r.summary).toContain('`teams/broken.yaml:6:10`');
    repo.remove('gitops/teams/broken.yaml');
  });

  it('the example workflow uses only inputs the action declares', () => {
    const action = parse(readFileSync(join(root, 'action.yml'), 'utf8')) as { inputs: Record<string, unknown>; runs: { steps: { env?: Record<string, string> }[] } };
    const workflow = parse(readFileSync(join(root, 'examples/github/teamkeys.yml'), 'utf8')) as { jobs: Record<string, { steps: { uses?: string; with?: Record<string, string> }[] }> };
    const used = Object.values(workflow.jobs).flatMap((j) => j.steps.filter((s) => s.uses?.includes('teamkeys')).flatMap((s) => Object.keys(s.with ?? {})));
    expect(used.length).toBeGreaterThan(0);
    for (const name of used) expect(Object.keys(action.inputs)).toContain(name);
    // Every declared input reaches the entry point.
    const env = action.runs.steps.flatMap((s) => Object.keys(s.env ?? {}));
    for (const name of Object.keys(action.inputs)) expect(env).toContain(`INPUT_${name.replace(/-/g, '_').toUpperCase()}`);
  });
});
