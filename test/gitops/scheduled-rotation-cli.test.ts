/**
 * `teamkeys plan` / `teamkeys apply` (child processes, real time) rotate a key made old on the
 * server: created while the in-process server's clock stood 31 days back, then the server's
 * clock set to now. A refused delivery exits 1 and names the secret; the retry exits 0.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { teamkeysAsync } from '../support/cli.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';
import { day, ManualClock } from '../support/clock.js';
import { startGitHubStandIn, type GitHubStandIn } from './github-standin.js';
import { monthlyKeyYaml } from '../support/manifests.js';

describe('teamkeys plan and apply rotate keys that fell due', () => {
  const clock = new ManualClock(Date.now() - 31 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let work: string;

  /** The CLI, spawned without blocking: the server and the stand-in answer from this process. */
  const run = async (command: 'plan' | 'apply') => {
    const args = [command, '--source', join(work, 'src'), '--source-id', 'ci-keys', '--server', server.base, '--token-file', join(work, 'token'), '--report-dir', join(work, 'reports')];
    const { code, stdout, stderr } = await teamkeysAsync(args, { env: { GITHUB_TOKEN: github.token, GITHUB_API_URL: github.url } });
    const report = JSON.parse(readFileSync(join(work, 'reports', 'report.json'), 'utf8')) as Report;
    return { code, out: stdout + stderr, report, markdown: readFileSync(join(work, 'reports', 'report.md'), 'utf8') };
  };
  const works = async (value: string) => (await fetch(`${server.api}/ownedaccesskeys/deploy-ci`, { headers: { Authorization: `Bearer ${value}` } })).status;

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    github = await startGitHubStandIn();
    work = mkdtempSync(join(tmpdir(), 'rotation-cli-'));
    writeFileSync(join(work, 'token'), `${adminKey}\n`);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(work, 'src'));
    writeFileSync(
      join(work, 'src', 'deploy.yaml'),
      monthlyKeyYaml({ overlap: '2h' }),
    );
  });
  afterAll(async () => {
    await server.close();
    await github.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('plan shows the rotation, apply makes it, a failed delivery exits 1 and the retry exits 0', async () => {
    expect((await run('apply')).code).toBe(0);
    const first = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    clock.set(Date.now());

    const plan = await run('plan');
    expect(plan.code).toBe(0);
    expect(plan.out).toContain('↻ OwnedAccessKey/deploy-ci');
    expect(plan.out).toContain('rotate key (value 31d old, rotate-every 30d): new value to github:acme/payments/DEPLOY_KEY; the previous value works 2h more once it is delivered');
    expect(plan.out).toContain('1 to rotate');
    expect(plan.markdown).toContain('| rotate | OwnedAccessKey/deploy-ci |');

    github.failPutWith = 500;
    const failed = await run('apply');
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('OwnedAccessKey/deploy-ci: rotated, but the key was not delivered to GitHub secret DEPLOY_KEY of acme/payments: GitHub answered 500');
    expect(failed.out).toContain('the previous value keeps working');
    expect(await works(first)).toBe(200);

    github.failPutWith = undefined;
    const retried = await run('apply');
    expect(retried.code).toBe(0);
    expect(retried.report.objects[0]).toMatchObject({ action: 'rotate', result: 'Rotated', rotation: { reason: 'unconfirmed' } });
    const second = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    expect(second).not.toBe(first);
    expect(await works(second)).toBe(200);
    expect(await works(first)).toBe(200);
    for (const r of [plan, failed, retried]) {
      for (const v of [first, second]) expect(r.out + JSON.stringify(r.report) + r.markdown).not.toContain(v);
    }
  });
});
