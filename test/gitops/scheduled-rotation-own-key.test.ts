/**
 * The reconciler's own key in git, rotated on schedule by the reconciler itself: after the rotation
 * its value is the key's previous value, which may not write access keys, so the run goes on (and
 * confirms) with the new value; the job holding the old value keeps working through the overlap.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { GitHubSecrets } from '../../src/gitops/keys/github-secrets.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { day, hour, ManualClock } from '../support/clock.js';
import { startGitHubStandIn, type GitHubStandIn } from './github-standin.js';
import { monthlyKeyYaml } from '../support/manifests.js';

const manifests = `apiVersion: management.service/v1
kind: Team
metadata:
  name: platform-bots
spec:
  users: [ci-bot]
  clusterRoles:
  - name: management-admin
---
${monthlyKeyYaml({ name: 'reconciler', sink: 'github:acme/platform/TEAMKEYS_TOKEN', overlap: '1h' })}`;

describe("the reconciler rotating its own key", () => {
  const clock = new ManualClock(Date.now() - 31 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let source: string;
  const apply = (token: string) => {
    const client = new HttpClient({ server: server.base, token });
    return reconcile({ mode: 'apply', client, source: { source, sourceId: 'platform' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 4, now: clock.now, keyDelivery: new GitHubSecrets({ token: github.token, apiUrl: github.url }) }).finally(() => client.close());
  };
  const status = async (value: string) => (await fetch(`${server.api}/teams`, { headers: { Authorization: `Bearer ${value}` } })).status;

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    github = await startGitHubStandIn();
    source = mkdtempSync(join(tmpdir(), 'own-key-'));
    writeFileSync(join(source, 'platform.yaml'), manifests);
  });
  afterAll(async () => {
    await server.close();
    await github.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('rotates, delivers and confirms with the new value, and the old one works until the overlap ends', async () => {
    expect((await apply(adminKey)).report.outcome).toBe('applied');
    const first = github.secrets.get('acme/platform/TEAMKEYS_TOKEN')!;
    expect(await status(first)).toBe(200);

    clock.set(Date.now());
    const { report } = await apply(first);
    expect(report.outcome).toBe('applied');
    expect(report.objects.find((o) => o.name === 'reconciler')).toMatchObject({ action: 'rotate', result: 'Rotated' });
    const second = github.secrets.get('acme/platform/TEAMKEYS_TOKEN')!;
    expect(second).not.toBe(first);
    const live = (await (await server.fetch(`${server.api}/ownedaccesskeys/reconciler`)).json()) as { status?: { rotation?: Record<string, unknown> } };
    expect(live.status?.rotation?.awaitingConfirmation).toBeUndefined();
    expect(live.status?.rotation?.overlapSeconds).toBe(3600);
    expect([await status(first), await status(second)]).toEqual([200, 200]);
    // The next run, with the new value, has nothing to do.
    expect((await apply(second)).report.outcome).toBe('clean');
    clock.advance(hour + 1000);
    expect([await status(first), await status(second)]).toEqual([401, 200]);
  });
});
