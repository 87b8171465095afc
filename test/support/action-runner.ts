/**
 * The bundled GitHub Action run as a runner runs it: `node <main>` from a fresh copy of action.yml
 * and dist-action, every input as INPUT_<NAME> (upper-cased, dashes kept; action.yml's defaults
 * filled in), the event payload in GITHUB_EVENT_PATH, outputs and the job summary in files, and the
 * REST API at GITHUB_API_URL (a stand-in answering from the test's process).
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { root } from './cli.js';

export interface ActionYml {
  inputs: Record<string, { default?: string; description?: string; required?: boolean }>;
  outputs: Record<string, unknown>;
  runs: { using: string; main: string };
}

export const actionYml = parse(readFileSync(join(root, 'action.yml'), 'utf8')) as ActionYml;

export interface ActionStep {
  /** The checkout the step runs in (GITHUB_WORKSPACE and the working directory). */
  workspace: string;
  /**
   * GITHUB_EVENT_NAME and the payload written to GITHUB_EVENT_PATH. As GitHub's payloads do, it
   * names the repository's default branch (`main` unless the payload names its own, or
   * `asIs` is set); a schedule's does not.
   */
  event: string;
  payload: object;
  asIs?: boolean;
  /** GITHUB_REF: by default the payload's ref, else refs/heads/main (GitHub always sets it). */
  ref?: string;
  inputs: Record<string, string>;
  /** Values for inputs the step leaves out, before action.yml's defaults. */
  inputDefaults?: Record<string, string>;
  /** GITHUB_API_URL. */
  apiUrl: string;
  env?: Record<string, string>;
}

export interface ActionRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout then stderr: what the job log shows. */
  log: string;
  /** GITHUB_OUTPUT as written, and parsed from its `name<<DELIMITER` blocks. */
  output: string;
  outputs: Record<string, string>;
  summary: string;
  runnerTemp: string;
}

export interface ActionRunner {
  /** Where the copy of the action is (action.yml beside dist-action/). */
  action: string;
  run(step: ActionStep): Promise<ActionRun>;
  cleanup(): void;
}

/** A runner with its own copy of the action, as `uses:` checks it out. */
export function actionRunner(): ActionRunner {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-runner-'));
  const action = join(dir, 'action');
  cpSync(join(root, 'action.yml'), join(action, 'action.yml'));
  cpSync(join(root, 'dist-action'), join(action, 'dist-action'), { recursive: true });
  return {
    action,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
    async run(step) {
      const temp = mkdtempSync(join(dir, 'step-'));
      const files = { output: join(temp, 'output'), summary: join(temp, 'summary'), event: join(temp, 'event.json') };
      writeFileSync(files.output, '');
      writeFileSync(files.summary, '');
      const given = step.payload as { ref?: unknown; repository?: Record<string, unknown> };
      const payload = step.asIs || step.event === 'schedule' ? given : { ...given, repository: { default_branch: 'main', ...given.repository } };
      writeFileSync(files.event, JSON.stringify(payload));
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        HOME: temp,
        RUNNER_TEMP: temp,
        GITHUB_ACTIONS: 'true',
        GITHUB_WORKSPACE: step.workspace,
        GITHUB_OUTPUT: files.output,
        GITHUB_STEP_SUMMARY: files.summary,
        GITHUB_EVENT_NAME: step.event,
        GITHUB_EVENT_PATH: files.event,
        GITHUB_REF: step.ref ?? (typeof given.ref === 'string' ? given.ref : 'refs/heads/main'),
        GITHUB_REPOSITORY: 'acme/platform-teams',
        GITHUB_API_URL: step.apiUrl,
        ...step.env,
      };
      for (const [name, spec] of Object.entries(actionYml.inputs)) {
        env[`INPUT_${name.toUpperCase()}`] = step.inputs[name] ?? step.inputDefaults?.[name] ?? spec.default ?? '';
      }
      // Not spawnSync: the stand-in API answers from this process while the action runs.
      const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
        const child = spawn(process.execPath, [join(action, actionYml.runs.main)], { cwd: step.workspace, env, timeout: 60_000 });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (status) => done({ status, stdout, stderr }));
      });
      const output = readFileSync(files.output, 'utf8');
      const outputs: Record<string, string> = {};
      for (const m of output.matchAll(/^([\w-]+)<<(\S+)\n([\s\S]*?)\n\2$/gm)) outputs[m[1]!] = m[3]!;
      return { code: r.status, stdout: r.stdout, stderr: r.stderr, log: r.stdout + r.stderr, output, outputs, summary: readFileSync(files.summary, 'utf8'), runnerTemp: temp };
    },
  };
}

/** A scheduled run's payload, and a pull request's (number 7, head abc, the given base). */
export const schedulePayload = { schedule: '0 3 * * *' };
export const pullRequestPayload = (base: { ref?: string; sha: string } = { sha: 'def' }) => ({
  action: 'synchronize',
  number: 7,
  pull_request: { number: 7, head: { sha: 'abc' }, base },
  repository: { name: 'platform-teams', owner: { login: 'acme' } },
});
