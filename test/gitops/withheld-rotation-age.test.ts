/**
 * review-ops: a pull request's plan shows live values only for fields its manifests name
 * (docs/gitops.md "Pull requests are untrusted"). A pull request that adds rotate-every to a key
 * gets the live value's age (status.rotation.rotatedAt, else creation) and whether its last
 * rotation's delivery failed (reason "unconfirmed") in the comment, report.json and saved plan.
 * Also: the plan of a pull request shows a rotation at all, which apply on the merge makes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { GitHubSecrets } from '../../src/gitops/keys/github-secrets.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';
import { startGitHubStandIn, type GitHubStandIn } from '../gitops/github-standin.js';
import { day, ManualClock } from '../support/clock.js';

const key = (extra: string) => `apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: old-ci
  annotations:
    gitops.management.service/key-secret: github:acme/payments/OLD_KEY
${extra}spec:
  user: ci-bot
`;

describe('a pull request plan and live key ages', () => {
  const clock = new ManualClock(Date.now() - 400 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let source: string;
  let client: HttpClient;
  const run = (mode: 'plan' | 'apply', pr: boolean) =>
    reconcile({ mode, client, source: { source, sourceId: 'ci-keys' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2, now: clock.now, withholdUnnamedLiveValues: pr, keyDelivery: new GitHubSecrets({ token: github.token, apiUrl: github.url }) }).then((r) => r.report);

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    github = await startGitHubStandIn();
    source = mkdtempSync(join(tmpdir(), 'review-ops-prplan-'));
    client = new HttpClient({ server: server.base, token: adminKey });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    await github.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('withholds the live value age of a key from a pull request that adds rotate-every', async () => {
    writeFileSync(join(source, 'k.yaml'), key(''));
    expect((await run('apply', false)).outcome).toBe('applied');
    clock.set(Date.now() - 3 * day - 5 * 3_600_000);
    writeFileSync(join(source, 'k.yaml'), key('    gitops.management.service/rotate-every: 1h\n    gitops.management.service/rotation-overlap: 30m\n'));
    const report = await run('plan', true);
    const text = JSON.stringify(report) + renderMarkdown(report);
    // 396d: when the key was created (or last rotated), a live fact no manifest names.
    expect(text).not.toContain('396d');
    expect(JSON.stringify(report.objects)).not.toMatch(/"ageSeconds":\s*\d/);
    expect(renderMarkdown(report)).toContain('would be rotated if due, rotate-every 1h');
  });
});
