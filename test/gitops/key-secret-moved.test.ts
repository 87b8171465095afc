/**
 * review-ops: changing a delivered key's key-secret (moving the secret, e.g. to an environment
 * secret) goes through the "never delivered" path: spec.key is set with no overlap, so the value
 * every CI job holds dies at once, and when the delivery to the new sink then fails the key works
 * for nobody. docs/keys.md promises "A failed delivery leaves the old value working".
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { GitHubSecrets } from '../../src/gitops/keys/github-secrets.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';
import { startGitHubStandIn, type GitHubStandIn } from '../gitops/github-standin.js';

const key = (sink: string) => `apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: moved-ci
  annotations:
    gitops.management.service/key-secret: ${sink}
spec:
  user: ci-bot
`;

describe('moving a delivered key to another sink', () => {
  let server: InProcess;
  let github: GitHubStandIn;
  let source: string;
  let client: HttpClient;
  const run = () =>
    reconcile({ mode: 'apply', client, source: { source, sourceId: 'ci-keys' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2, keyDelivery: new GitHubSecrets({ token: github.token, apiUrl: github.url }) }).then((r) => r.report);
  const use = async (value: string) => (await fetch(`${server.api}/ownedaccesskeys/moved-ci`, { headers: { Authorization: `Bearer ${value}` } })).status;

  beforeAll(async () => {
    server = await startInProcess({});
    github = await startGitHubStandIn();
    source = mkdtempSync(join(tmpdir(), 'review-ops-src-'));
    client = new HttpClient({ server: server.base, token: adminKey });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    await github.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('a failed delivery to the new sink leaves the value CI holds working', async () => {
    writeFileSync(join(source, 'k.yaml'), key('github:acme/payments/DEPLOY_KEY'));
    expect((await run()).outcome).toBe('applied');
    const held = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    expect(await use(held)).toBe(200);

    // A reviewed, merged change: the secret moves to the production environment, which does not exist yet.
    writeFileSync(join(source, 'k.yaml'), key('github-env:acme/payments/production/DEPLOY_KEY'));
    const report = await run();
    expect(report.outcome).toBe('failed');
    // The value every job of acme/payments still reads from DEPLOY_KEY:
    expect(await use(held)).toBe(200);
  });

  it('a good delivery to the new sink keeps the held value for the overlap, then records the new sink', async () => {
    const held = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    writeFileSync(join(source, 'k.yaml'), key('github:acme/payments/NEW_KEY'));
    const report = await run();
    expect(report.outcome).toBe('applied');
    expect(report.objects[0]!.rotation).toMatchObject({ reason: 'moved', sink: 'github:acme/payments/NEW_KEY', overlap: '6h' });
    const moved = github.secrets.get('acme/payments/NEW_KEY')!;
    expect(await use(moved)).toBe(200);
    expect(await use(held)).toBe(200);
    const live = await client.get('ownedaccesskeys', 'moved-ci');
    expect(live!.metadata.annotations?.['gitops.management.service/key-delivered']).toBe('github:acme/payments/NEW_KEY');
    expect((await run()).summary.rotate).toBeUndefined();
  });
});
