/**
 * review-ops (a check that holds): a daemon whose delivery keeps failing backs off (1s, 2s, 4s, ...
 * up to 5 min) instead of re-planning in a loop, although the unconfirmed key is "due" at time 0.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { SyncDaemon } from '../../src/daemon/daemon.js';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import { GitHubSecrets } from '../../src/gitops/keys/github-secrets.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';
import { startGitHubStandIn, type GitHubStandIn } from '../gitops/github-standin.js';
import { day, ManualClock } from '../support/clock.js';
import { monthlyKeyYaml } from '../support/manifests.js';

describe('daemon with a delivery that keeps failing', () => {
  const clock = new ManualClock(Date.now() - 40 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let source: string;
  let client: HttpClient;
  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    github = await startGitHubStandIn();
    source = mkdtempSync(join(tmpdir(), 'review-ops-daemon-'));
    client = new HttpClient({ server: server.base, token: adminKey });
    writeFileSync(join(source, 'k.yaml'), monthlyKeyYaml({ name: 'd', sink: 'github:acme/payments/D', overlap: '1h' }));
    await reconcile({ mode: 'apply', client, source: { source, sourceId: 's' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2, now: clock.now, keyDelivery: new GitHubSecrets({ token: github.token, apiUrl: github.url }) });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    await github.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('backs off', async () => {
    clock.set(Date.now());
    github.failPutWith = 500;
    let cycles = 0;
    const logged: string[] = [];
    const daemon = new SyncDaemon({
      source: { source, sourceId: 's' }, client, intervalMs: 200, selfHeal: true, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2,
      keyDelivery: new GitHubSecrets({ token: github.token, apiUrl: github.url }), now: clock.now, metrics: new DaemonMetrics(),
      log: pino({ level: 'debug' }, { write: (l: string) => void logged.push(l) }), onCycle: () => void cycles++,
    });
    daemon.start();
    await new Promise((r) => setTimeout(r, 6000));
    await daemon.stop();
    expect(cycles).toBeGreaterThanOrEqual(2);
    expect(cycles).toBeLessThanOrEqual(5);
    expect(logged.join('\n')).not.toMatch(/\btk_[0-9A-Za-z]{49}\b/);
  }, 20_000);
});
