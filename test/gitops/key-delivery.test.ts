/**
 * Keys reach CI: `teamkeys apply` against a served API seals each new key of an OwnedAccessKey
 * annotated key-secret for a GitHub stand-in that decrypts it, and the delivered key then
 * authenticates. A refused delivery is an error naming the secret (exit 1) that leaves the key,
 * and the next run rotates it and delivers it. The key is in no output or report.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamkeysAsync } from '../support/cli.js';
import { kubeconfigWithToken, kubectl, kubectlPath, startServe, type Served } from '../server/serve-process.js';
import { startGitHubStandIn, type GitHubStandIn } from './github-standin.js';

const key = (name: string, secret: string) => `apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: ${name}
  annotations:
    gitops.management.service/key-secret: github:acme/payments/${secret}
spec:
  user: ci-bot
`;

describe('keys delivered to GitHub Actions secrets', () => {
  let served: Served;
  let github: GitHubStandIn;
  let source: string;
  let reports: string;

  /** The CLI, spawned without blocking (the stand-in answers from this process); its output and reports in one text each. */
  const run = async (command: string, env: Record<string, string> = { GITHUB_TOKEN: github.token, GITHUB_API_URL: github.url }) => {
    const target = ['--source-id', 'ci-keys', '--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')];
    const r = await teamkeysAsync([command, '--source', source, '--report-dir', reports, ...(command === 'validate' ? [] : target)], { env: { GITHUB_TOKEN: '', GITHUB_API_URL: '', ...env } });
    return { code: r.code, out: r.stdout + r.stderr, files: readFileSync(join(reports, 'report.json'), 'utf8') + readFileSync(join(reports, 'report.md'), 'utf8') };
  };
  const annotationsOf = (name: string) => JSON.parse(kubectl(served, ['get', 'oak', name, '-o', 'jsonpath={.metadata.annotations}']).stdout || '{}') as Record<string, string>;
  const whoami = (token: string, name: string) => kubectl(served, ['auth', 'whoami'], { kubeconfig: kubeconfigWithToken(served, token, name) });
  const noKeyIn = (text: string) => {
    for (const value of github.secrets.values()) expect(text).not.toContain(value);
    expect(text).not.toMatch(/\btk_[0-9A-Za-z]{49}\b/);
  };

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
    github = await startGitHubStandIn();
    source = join(served.dir, 'gitops');
    reports = join(served.dir, 'reports');
    mkdirSync(source);
    writeFileSync(join(source, 'ci.yaml'), key('payments-ci', 'TEAMKEYS_KEY'));
  });
  afterAll(async () => {
    await served.stop();
    await github.close();
  });

  it('apply seals the new key for the repository, the secret holds it, and it authenticates', async () => {
    const plan = await run('plan');
    expect(plan.out).toContain('apply delivers the key the server generates to github:acme/payments/TEAMKEYS_KEY');
    const r = await run('apply');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('key delivered to github:acme/payments/TEAMKEYS_KEY');
    const delivered = github.secrets.get('acme/payments/TEAMKEYS_KEY')!;
    expect(delivered).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    noKeyIn(r.out + r.files + served.stdout() + served.stderr());
    const me = whoami(delivered, 'delivered');
    expect(me.code, me.stderr).toBe(0);
    expect(me.stdout).toMatch(/^Extra: management\.service\/access-key\s+\[payments-ci\]$/m);
    expect(annotationsOf('payments-ci')['gitops.management.service/key-delivered']).toBe('github:acme/payments/TEAMKEYS_KEY');

    // Delivered once: the next run leaves the key (and the secret) alone, and sees no drift.
    const puts = github.requests.filter((q) => q.startsWith('PUT')).length;
    const again = await run('apply');
    expect(again.code, again.out).toBe(0);
    expect(again.out).toContain('Created 0, updated 0, replaced 0, deleted 0, 1 unchanged');
    expect(github.requests.filter((q) => q.startsWith('PUT')).length).toBe(puts);
  });

  it('a refused delivery names the secret, exits 1 and leaves the key; the next run rotates and delivers it', async () => {
    writeFileSync(join(source, 'deploy.yaml'), key('deploy-ci', 'DEPLOY_KEY'));
    github.failPutWith = 403;
    const failed = await run('apply');
    expect(failed.code, failed.out).toBe(1);
    expect(failed.out).toContain('OwnedAccessKey/deploy-ci: the key was not delivered to GitHub secret DEPLOY_KEY of acme/payments: GitHub answered 403 "Resource not accessible by integration"');
    expect(failed.out).toContain('the next run rotates the key and delivers it again');
    noKeyIn(failed.out + failed.files);
    expect(kubectl(served, ['get', 'oak', 'deploy-ci']).code).toBe(0);
    // Marked pending: had the value reached the secret unrecorded, the next run must not kill it at once.
    expect(annotationsOf('deploy-ci')['gitops.management.service/key-delivered']).toBe('pending:github:acme/payments/DEPLOY_KEY');

    github.failPutWith = 500;
    const stillFailing = await run('apply');
    expect(stillFailing.code).toBe(1);
    expect(stillFailing.out).toContain('GitHub answered 500');

    github.failPutWith = undefined;
    const plan = await run('plan');
    expect(plan.out).toContain('rotate key (its last delivery was never recorded (it may have reached github:acme/payments/DEPLOY_KEY): rotated again');
    const retried = await run('apply');
    expect(retried.code, retried.out).toBe(0);
    expect(retried.out).toMatch(/OwnedAccessKey\/deploy-ci -> Rotated/);
    expect(retried.out).toContain('delivered to github:acme/payments/DEPLOY_KEY; the previous value works until');
    const delivered = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    noKeyIn(retried.out + retried.files + served.stderr());
    expect(whoami(delivered, 'rotated').stdout).toMatch(/access-key\s+\[deploy-ci\]/);
    expect(annotationsOf('deploy-ci')['gitops.management.service/key-delivered']).toBe('github:acme/payments/DEPLOY_KEY');
  });

  it('without GITHUB_TOKEN nothing is created for a key that must go to a secret', async () => {
    writeFileSync(join(source, 'later.yaml'), key('later-ci', 'LATER_KEY'));
    const r = await run('apply', {});
    expect(r.code).toBe(1);
    expect(r.out).toContain('OwnedAccessKey/later-ci: its key goes to GitHub secret LATER_KEY of acme/payments but GITHUB_TOKEN is not set: not created');
    expect(kubectl(served, ['get', 'oak', 'later-ci']).code).toBe(1);
  });

  it('validate refuses a malformed target at its file and line', async () => {
    writeFileSync(join(source, 'later.yaml'), key('later-ci', 'GITHUB_KEY'));
    const r = await run('validate');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/later\.yaml:6:\d+: gitops\.management\.service\/key-secret "GITHUB_KEY" is not a valid secret name/);
  });
});
