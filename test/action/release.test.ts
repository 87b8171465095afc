/**
 * What a release of the Action needs (docs/action.md): the release workflow's own shell steps,
 * run for real (the version check; the tagging against a bare remote, twice, so the major tag
 * moves), its refusal of a stale bundle, and the example workflow's handling of forks.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { root } from '../support/cli.js';

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, string>;
}
const release = parse(readFileSync(join(root, '.github/workflows/release.yml'), 'utf8')) as { on: Record<string, unknown>; permissions: Record<string, string>; jobs: { release: { steps: Step[] } } };
const steps = release.jobs.release.steps;
const step = (name: string) => steps.find((s) => s.name?.startsWith(name))!;
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const work = mkdtempSync(join(tmpdir(), 'teamkeys-release-'));

function sh(script: string, cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync('bash', ['-e', '-c', script], { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('releasing the Action', () => {
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('is started by hand with a version, may push tags, and refuses a stale bundle before tagging', () => {
    expect(Object.keys(release.on)).toEqual(['workflow_dispatch']);
    expect(release.permissions).toEqual({ contents: 'write' });
    const names = steps.map((s) => s.name ?? s.uses);
    expect(names.indexOf('The committed Action bundle is the one this commit builds')).toBeLessThan(names.indexOf('Tag vX.Y.Z and move the major tag'));
    expect(step('The committed Action bundle').run).toContain('npm run build:action && git diff --exit-code -- dist-action/');
  });

  it('checks the version against package.json', () => {
    const check = step('The version is the package').run!;
    expect(sh(check, root, { VERSION: version }).code).toBe(0);
    const wrong = sh(check, root, { VERSION: '9.9.9' });
    expect(wrong.code).toBe(1);
    expect(wrong.out).toContain(`::error::package.json says ${version}, not 9.9.9`);
  });

  it('tags vX.Y.Z and moves the major tag on the remote', () => {
    const remote = join(work, 'remote.git');
    const clone = join(work, 'clone');
    expect(sh(`git init -q --bare ${remote} && git init -q -b main ${clone}`, work).code).toBe(0);
    const commit = (msg: string) => sh(`git -c user.email=r@x -c user.name=r commit -q --allow-empty -m ${msg}`, clone);
    expect(sh(`git remote add origin ${remote}`, clone).code).toBe(0);
    const tag = step('Tag vX.Y.Z').run!;
    commit('one');
    expect(sh(tag, clone, { VERSION: '1.2.0' }).code).toBe(0);
    commit('two');
    const second = sh(tag, clone, { VERSION: '1.3.0' });
    expect(second.code, second.out).toBe(0);
    const tags = (name: string) => sh(`git rev-parse ${name}^{commit}`, remote).out.trim();
    expect(tags('v1')).toBe(tags('v1.3.0'));
    expect(tags('v1.2.0')).not.toBe(tags('v1.3.0'));
  });

  it('the example workflow validates every pull request and plans only with secrets (not for forks)', () => {
    const workflow = parse(readFileSync(join(root, 'examples/github/teamkeys.yml'), 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
    const review = workflow.jobs.review!.steps;
    const validate = review.find((s) => s.with?.command === 'validate')!;
    expect(validate.if).toBeUndefined();
    expect(Object.keys(validate.with!)).not.toContain('token');
    const fork = "github.event.pull_request.head.repo.full_name != github.repository";
    expect(review.find((s) => s.with?.command === 'plan')!.if).toBe(fork.replace('!=', '=='));
    expect(review.find((s) => s.if === fork)!.run).toContain('plan skipped - pull requests from forks get no secrets');
  });
});
