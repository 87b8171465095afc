/**
 * Keyless CI end to end: a FederatedCredential applied from a Git folder by `teamkeys apply` to a
 * `teamkeys serve` process (which trusts the test's issuer through NODE_EXTRA_CA_CERTS, as an
 * operator trusts a private CA), a job token exchanged over HTTP, and kubectl with the minted key:
 * `kubectl auth whoami` shows the team and the job, and the key may do exactly what the rule's scope allows.
 */
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { kubeconfigWithToken, kubectl, startServe, type Served } from '../support/serve-process.js';
import { startIssuer, type TestIssuer } from './issuer.js';

describe('keyless CI end to end', () => {
  let issuer: TestIssuer;
  let served: Served;
  let repo: Repo;
  let caDir = '';

  beforeAll(async () => {
    issuer = await startIssuer();
    repo = await newRepo({ withExamples: false });
    caDir = mkdtempSync(join(tmpdir(), 'teamkeys-issuer-ca-'));
    const caFile = join(caDir, 'ca.pem');
    writeFileSync(caFile, issuer.ca);
    served = await startServe([], { env: { NODE_EXTRA_CA_CERTS: caFile } });
  }, 60_000);
  afterAll(async () => {
    await served?.stop();
    await issuer?.close();
    repo?.cleanup();
    rmSync(caDir, { recursive: true, force: true });
  });

  it('a rule applied from git lets a matching job act for the team, with exactly the rule\'s rights', async () => {
    repo.write('teams/payments.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: payments\nspec:\n  clusterRoles:\n    - name: teams-admin\n');
    repo.write(
      'federated/payments-main.yaml',
      [
        'apiVersion: management.service/v1',
        'kind: FederatedCredential',
        'metadata:',
        '  name: payments-main',
        'spec:',
        `  issuer: ${issuer.url}`,
        '  audiences: [teamkeys]',
        '  claims:',
        '    repository_id: "1001"',
        '    ref: refs/heads/main',
        '  team: payments',
        '  scope:',
        '    roles:',
        '      - role: cli',
        '',
      ].join('\n'),
    );
    await repo.commit('payments deploys from main without a stored key');
    const applied = teamkeys(['apply', '--source', repo.dir, '--source-id', 'ci', '--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')]);
    expect(applied.stdout).toContain('+ FederatedCredential/payments-main -> Created  (federated/payments-main.yaml:1:1)');
    expect(applied.code).toBe(0);

    const dispatcher = new Agent({ connect: { ca: readFileSync(join(served.dir, 'tls/cert.pem')) } });
    const res = await undiciFetch(`${new URL(served.url).origin}/auth/token`, {
      method: 'POST',
      dispatcher,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: await issuer.token(), subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' }).toString(),
    });
    const body = (await res.json()) as { access_token: string; expires_in: number };
    expect(res.status).toBe(200);
    const kubeconfig = kubeconfigWithToken(served, body.access_token, 'job');
    const whoami = kubectl(served, ['auth', 'whoami', '-o', 'json'], { kubeconfig });
    expect(whoami.code).toBe(0);
    const info = (JSON.parse(whoami.stdout) as { status: { userInfo: { username: string; extra: Record<string, string[]> } } }).status.userInfo;
    expect(info.username).toBe('team:payments');
    expect(info.extra['management.service/job']).toEqual(['repository acme/app on refs/heads/main, workflow ci, run 42']);
    // The team administers teams; the rule's scope (role cli) leaves the job its reads.
    expect(kubectl(served, ['auth', 'can-i', 'get', 'teams'], { kubeconfig }).stdout.trim()).toBe('yes');
    expect(kubectl(served, ['auth', 'can-i', 'create', 'teams'], { kubeconfig }).stdout.trim()).toBe("no - the access key's scope (role cli) allows only read requests");
    const write = kubectl(served, ['annotate', 'teams.management.service', 'payments', 'x=y'], { kubeconfig });
    expect(write.code).not.toBe(0);
    expect(write.stderr).toContain('Forbidden');
  });

  it('a write by a job\'s key shows in the audit trail and in a drift report as the job', async () => {
    const job = 'repository acme/app on refs/heads/main, workflow ci, run 42';
    const tls = ['--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')];
    repo.write('teams/payments.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: payments\nspec:\n  displayName: Payments\n  clusterRoles:\n    - name: teams-admin\n');
    // A second rule for the same job without a scope: the job may write what the team may.
    repo.write('federated/payments-deploy.yaml', ['apiVersion: management.service/v1', 'kind: FederatedCredential', 'metadata:', '  name: payments-deploy', 'spec:', `  issuer: ${issuer.url}`, '  audiences: [teamkeys]', '  claims:', '    repository_id: "1001"', '  team: payments', ''].join('\n'));
    await repo.commit('payments deploys may write');
    expect(teamkeys(['apply', '--source', repo.dir, '--source-id', 'ci', ...tls]).code).toBe(0);

    const dispatcher = new Agent({ connect: { ca: readFileSync(join(served.dir, 'tls/cert.pem')) } });
    const res = await undiciFetch(`${new URL(served.url).origin}/auth/token`, {
      method: 'POST',
      dispatcher,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: await issuer.token(), subject_token_type: 'urn:ietf:params:oauth:token-type:id_token', federated_credential: 'payments-deploy' }).toString(),
    });
    expect(res.status).toBe(200);
    const kubeconfig = kubeconfigWithToken(served, ((await res.json()) as { access_token: string }).access_token, 'deploy');
    const whoami = JSON.parse(kubectl(served, ['auth', 'whoami', '-o', 'json'], { kubeconfig }).stdout) as { status: { userInfo: { extra: Record<string, string[]> } } };
    const keyName = whoami.status.userInfo.extra['management.service/access-key']![0]!;
    expect(kubectl(served, ['patch', 'teams.management.service', 'payments', '--type=merge', '-p', '{"spec":{"displayName":"By CI"}}'], { kubeconfig }).code).toBe(0);

    const trail = JSON.parse(kubectl(served, ['get', '--raw', '/kubernetes/management/apis/audit.management.service/v1/events?resource=teams&name=payments']).stdout) as { items: { verb: string; fieldManager: string; user: Record<string, unknown> }[] };
    const patched = trail.items.find((e) => e.verb === 'patch' && e.fieldManager === 'kubectl-patch');
    expect(patched?.user).toEqual({ username: 'team:payments', keyName, extra: { 'management.service/job': [job] } });

    const reports = join(caDir, 'reports');
    const plan = teamkeys(['plan', '--source', repo.dir, '--source-id', 'ci', ...tls, '--report-dir', reports]);
    const line = new RegExp(`changed spec\\.displayName: team:payments \\(key ${keyName}\\) via kubectl-patch, job ${job.replace(/[.,]/g, '\\$&')} at \\d{4}-`);
    expect(plan.stdout).toMatch(line);
    expect(readFileSync(join(reports, 'report.md'), 'utf8')).toContain(`team:payments (key ${keyName}) via kubectl-patch, job ${job} at `);
  });
});
