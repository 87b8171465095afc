/**
 * The bundled Action with `auth: oidc` plans with no stored key: run as a runner runs it
 * (test/support/action-runner.ts), it asks a stand-in for GitHub's token request endpoint
 * (ACTIONS_ID_TOKEN_REQUEST_URL / _TOKEN) for the job's ID token, signed by the test's HTTPS issuer
 * (test/federation/issuer.ts), trades it at the server's POST /auth/token on a FederatedCredential,
 * and plans with the minted key, which it masks and never prints.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRunner, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { teamYaml } from '../support/manifests.js';
import { create } from '../auth/fixture.js';
import { startIssuer, type TestIssuer } from '../federation/issuer.js';
import { startFakeGitHub, type FakeGitHub } from './github-api.js';

/** The job's claims, as GitHub would write them for a push to main of acme/platform-teams. */
const job = { sub: 'repo:acme/platform-teams:ref:refs/heads/main', repository: 'acme/platform-teams', repository_id: '3003', repository_owner_id: '2002', ref: 'refs/heads/main', workflow: 'teamkeys', run_id: '77', event_name: 'push' };
const requestToken = 'runtime-request-token-for-the-test';

interface TokenRequest {
  authorization: string | undefined;
  audience: string | null;
}

/** GitHub's token request endpoint as a job sees it: bearer the request token, `&audience=` appended. */
async function startTokenRequestEndpoint(issuer: TestIssuer): Promise<{ url: string; requests: TokenRequest[]; close(): Promise<void> }> {
  const requests: TokenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const audience = url.searchParams.get('audience');
    requests.push({ authorization: req.headers.authorization, audience });
    if (req.headers.authorization !== `Bearer ${requestToken}` || url.searchParams.get('api-version') !== '2.0') {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"message":"bad request token"}');
      return;
    }
    void issuer.token({ ...job, ...(audience ? { aud: audience } : {}) }).then((value) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ count: 1, value })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    // GitHub's URL carries a query already; getIDToken appends `&audience=`.
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/_apis/oidctoken?api-version=2.0`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the Action plans with the job token and no stored key (auth: oidc)', () => {
  let issuer: TestIssuer;
  let endpoint: Awaited<ReturnType<typeof startTokenRequestEndpoint>>;
  let server: InProcess;
  let github: FakeGitHub;
  let runner: ActionRunner;
  let repo: Repo;

  const plan = (inputs: Record<string, string>, env: Record<string, string> = { ACTIONS_ID_TOKEN_REQUEST_URL: endpoint.url, ACTIONS_ID_TOKEN_REQUEST_TOKEN: requestToken }) =>
    runner.run({ workspace: repo.dir, event: 'push', payload: { ref: 'refs/heads/main', repository: { name: 'platform-teams', owner: { login: 'acme' } } }, inputs: { command: 'plan', server: server.base, token: '', source: 'gitops', 'source-id': 'ci', comment: 'false', 'github-token': '', ...inputs }, apiUrl: github.url, env });

  beforeAll(async () => {
    issuer = await startIssuer();
    endpoint = await startTokenRequestEndpoint(issuer);
    server = await startInProcess({ federation: { ca: issuer.ca } });
    github = await startFakeGitHub('acme', 'platform-teams', 7);
    runner = actionRunner();
    await create(server, 'teams', { metadata: { name: 'payments' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } });
    await create(server, 'federatedcredentials', {
      apiVersion: 'management.service/v1',
      kind: 'FederatedCredential',
      metadata: { name: 'platform-teams-plan' },
      spec: { issuer: issuer.url, audiences: ['teamkeys'], claims: { repository_id: '3003', repository_owner_id: '2002', ref: 'refs/heads/main', event_name: 'push' }, team: 'payments' },
    });
    repo = await newRepo({ withExamples: false });
    repo.write('gitops/teams/payments.yaml', teamYaml('payments', { clusterRoles: [{ name: 'teams-viewer' }], users: ['carla'] }));
    await repo.commit('payments gains carla');
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await endpoint?.close();
    await issuer?.close();
    await github?.close();
    repo?.cleanup();
    runner?.cleanup();
  });

  it("plans with a key minted for the job's token, masked and never printed", async () => {
    const r = await plan({ auth: 'oidc' });
    expect(r.code, r.log).toBe(0);
    expect(r.outputs.outcome).toBe('changes');
    expect(r.summary).toContain('Team/payments');
    // The ID token was asked for with the request token and the default audience.
    expect(endpoint.requests).toEqual([{ authorization: `Bearer ${requestToken}`, audience: 'teamkeys' }]);
    // The minted key is the job's: a Federated key of the rule, annotated with the job.
    const keys = (await (await server.fetch(`${server.api}/ownedaccesskeys`)).json()) as { items: { metadata: { name: string; annotations?: Record<string, string> }; spec: { type?: string; team?: string } }[] };
    const minted = keys.items.filter((k) => k.spec.type === 'Federated');
    expect(minted).toHaveLength(1);
    expect(minted[0]!.spec.team).toBe('payments');
    expect(minted[0]!.metadata.annotations).toMatchObject({ 'federation.management.service/job': 'repository acme/platform-teams on refs/heads/main, workflow teamkeys, run 77' });
    // The runner was told to mask it (::add-mask::), and the value appears nowhere else in the log or summary.
    const masked = [...r.stdout.matchAll(/^::add-mask::(.+)$/gm)].map((m) => m[1]!);
    const asJob = await Promise.all(masked.map(async (v) => ({ v, res: await fetch(`${server.base}/kubernetes/management/apis/authentication.k8s.io/v1/selfsubjectreviews`, { method: 'POST', headers: { Authorization: `Bearer ${v}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }) }) })));
    const key = asJob.find((a) => a.res.status === 201 || a.res.status === 200);
    expect(key, `one masked value is a key acting for the job (masked: ${masked.length})`).toBeDefined();
    const review = (await key!.res.json()) as { status: { userInfo: { username: string; extra: Record<string, string[]> } } };
    expect(review.status.userInfo.username).toBe('team:payments');
    expect(review.status.userInfo.extra['management.service/job']).toEqual(['repository acme/platform-teams on refs/heads/main, workflow teamkeys, run 77']);
    expect(r.log.split(key!.v).length - 1, 'the key appears only in its ::add-mask:: line').toBe(1);
    expect(r.summary).not.toContain(key!.v);
  });

  it('without id-token: write (no request URL) the step fails saying so, before any exchange', async () => {
    const r = await plan({ auth: 'oidc' }, {});
    expect(r.code).not.toBe(0);
    expect(r.log).toContain('auth: oidc needs the job\'s ID token, which GitHub gives only to jobs with "permissions: id-token: write"');
  });

  it('a token the rule does not trust (another audience) fails the step with the exchange\'s reason', async () => {
    const before = endpoint.requests.length;
    const r = await plan({ auth: 'oidc', 'oidc-audience': 'sts.amazonaws.com' });
    expect(endpoint.requests.slice(before)).toEqual([{ authorization: `Bearer ${requestToken}`, audience: 'sts.amazonaws.com' }]);
    expect(r.code).not.toBe(0);
    expect(r.log).toContain('the server refused the token exchange');
    expect(r.log).toContain('invalid_grant');
    expect(r.log).toContain("the token's audience is not one a FederatedCredential of this issuer accepts");
  });
});
