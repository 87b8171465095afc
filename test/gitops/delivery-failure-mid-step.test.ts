/**
 * Issue 39, "every API write of a GitOps step in one place": a key whose delivery fails in the
 * middle of a step is named in the report, is recorded nowhere as delivered (its mark stays
 * `pending:`), and the keys around it are delivered and recorded as if it had not failed; the next
 * plan rotates it with the overlap.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { GitHubSecrets } from '../../src/gitops/keys/github-secrets.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { renderText } from '../../src/gitops/report/text.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { accessKeyYaml } from '../support/manifests.js';
import { startGitHubStandIn, type GitHubStandIn } from './github-standin.js';

const delivered = 'gitops.management.service/key-delivered';
const sinks = {
  'a-ci': 'github:acme/app/A_KEY',
  // The production environment does not exist (yet): GitHub answers 404.
  'b-ci': 'github-env:acme/app/production/B_KEY',
  'c-ci': 'github:acme/app/C_KEY',
};

describe('a delivery that fails in the middle of a step', () => {
  let server: InProcess;
  let github: GitHubStandIn;
  let client: HttpClient;
  let source: string;
  // One write at a time: b-ci fails after a-ci is done and before c-ci starts.
  const run = (mode: 'plan' | 'apply') =>
    reconcile({ mode, client, source: { source, sourceId: 'ci-keys' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 1, keyDelivery: new GitHubSecrets({ token: github.token, apiUrl: github.url }) }).then((r) => r.report);
  const use = async (name: string, value: string) => (await fetch(`${server.api}/ownedaccesskeys/${name}`, { headers: { Authorization: `Bearer ${value}` } })).status;

  beforeAll(async () => {
    server = await startInProcess({});
    github = await startGitHubStandIn();
    client = new HttpClient({ server: server.base, token: adminKey });
    source = mkdtempSync(join(tmpdir(), 'teamkeys-delivery-mid-step-'));
    for (const [name, sink] of Object.entries(sinks)) writeFileSync(join(source, `${name}.yaml`), accessKeyYaml(name, { user: 'ci-bot' }, { annotations: { 'gitops.management.service/key-secret': sink } }));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    await github.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('names the key that was not delivered, records only the delivered ones, and the next plan rotates the other', async () => {
    const report = await run('apply');
    expect(report.outcome).toBe('failed');
    expect(report.summary).toMatchObject({ create: 3, failed: 1 });
    const [a, b, c] = ['a-ci', 'b-ci', 'c-ci'].map((n) => report.objects.find((o) => o.name === n)!);
    expect(a).toMatchObject({ result: 'Created', keySecret: sinks['a-ci'] });
    expect(c).toMatchObject({ result: 'Created', keySecret: sinks['c-ci'] });
    expect(b!.result).toBe('Failed');
    expect(b!.keySecret).toBeUndefined();
    expect(b!.error).toMatch(/^OwnedAccessKey\/b-ci: the key was not delivered to GitHub secret B_KEY of environment production .*404.*; the next run rotates the key and delivers it again$/);
    expect(renderText(report)).toContain('OwnedAccessKey/b-ci: the key was not delivered to GitHub secret B_KEY');
    expect(JSON.stringify(report)).not.toMatch(/tk_[0-9A-Za-z]{20,}/);

    // Delivered and recorded: the values in the secrets work.
    for (const [name, secret] of [['a-ci', 'acme/app/A_KEY'], ['c-ci', 'acme/app/C_KEY']] as const) {
      expect(await use(name, github.secrets.get(secret)!)).toBe(200);
      expect((await client.get('ownedaccesskeys', name))!.metadata.annotations?.[delivered]).toBe(sinks[name]);
    }
    // Not delivered: no secret holds it, and the object says it is still on its way, never delivered.
    expect([...github.secrets.keys()].sort()).toEqual(['acme/app/A_KEY', 'acme/app/C_KEY']);
    expect((await client.get('ownedaccesskeys', 'b-ci'))!.metadata.annotations?.[delivered]).toBe(`pending:${sinks['b-ci']}`);

    const next = await run('plan');
    expect(next.objects.filter((o) => o.action !== 'skip' && o.changes.length + (o.rotation ? 1 : 0) > 0).map((o) => [o.name, o.rotation?.reason])).toEqual([['b-ci', 'unrecorded']]);
  });
});
