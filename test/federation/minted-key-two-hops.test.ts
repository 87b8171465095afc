/**
 * Found by a review of stop 64's fixes: the tie of a key made with a minted (Federated) key was one
 * hop only. A key K made with the minted key M was tied to M, but K's identity carried no sign-in
 * (authenticate.ts signInOf set it for a Login owner only), so a key made with K was tied to
 * nothing, and outlived the rule's narrowing and M's revocation. Every key made down the chain is
 * now tied to M, as down a Login key's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { mintFederatedKey } from '../../src/federation/mint.js';
import type { FederatedCredential } from '../../src/api/types.js';

const json = { 'Content-Type': 'application/json' };
const bearer = (value: string) => ({ ...json, Authorization: `Bearer ${value}` });

describe('two hops from a minted key', () => {
  let server: InProcess;
  let minted = '';
  const url = (path: string) => `${server.api}/${path}`;
  const job = 'repository acme/app on refs/heads/attacker, workflow ci, run 1';

  beforeAll(async () => {
    server = await startInProcess();
    const team = await server.fetch(url('teams'), { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'deployers' }, spec: { users: ['deployer'], clusterRoles: [{ name: 'teams-viewer' }] } }) });
    expect(team.status).toBe(201);
    const rule = await server.fetch(url('federatedcredentials'), {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'derive' }, spec: { issuer: 'https://token.actions.githubusercontent.com', audiences: ['teamkeys'], claims: { repository_id: '7272', ref: 'refs/heads/*' }, user: 'deployer', ttl: 3600 } }),
    });
    expect(rule.status, await rule.clone().text()).toBe(201);
    minted = (await mintFederatedKey(server.registry, (await rule.json()) as FederatedCredential, job, 3600, { username: `job:${job}` })).key;
  });
  afterAll(() => server.close());

  it('a key made by a key made by the minted key is tied to the minted key, and stops with it', async () => {
    const first = await server.fetch(url('ownedaccesskeys'), { method: 'POST', headers: bearer(minted), body: JSON.stringify({ metadata: { name: 'hop1' }, spec: { user: 'deployer', ttl: 3000 } }) });
    expect(first.status, await first.clone().text()).toBe(201);
    const hop1 = (await first.json()) as { metadata: { ownerReferences?: { kind: string; name: string }[] }; spec: { key: string } };
    expect(hop1.metadata.ownerReferences?.map((r) => r.name)).toHaveLength(1);

    const second = await server.fetch(url('ownedaccesskeys'), { method: 'POST', headers: bearer(hop1.spec.key), body: JSON.stringify({ metadata: { name: 'hop2' }, spec: { user: 'deployer', ttl: 3000 } }) });
    expect(second.status, await second.clone().text()).toBe(201);
    const hop2 = (await second.json()) as { metadata: { ownerReferences?: { kind: string; name: string }[] }; spec: { key: string } };
    // Tied to the minted key itself, as hop1 is.
    expect(hop2.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}`)).toEqual(hop1.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}`));

    const narrowed = await server.fetch(url('federatedcredentials/derive'), { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { claims: { repository_id: '7272', ref: 'refs/heads/main' } } }) });
    expect(narrowed.status).toBe(200);
    const revoked = await fetch(`${server.base}/auth/revoke`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `token=${minted}` });
    expect(revoked.status).toBe(200);
    expect((await server.fetch(url('teams/deployers'), { headers: bearer(minted) })).status).toBe(401);
    expect((await server.fetch(url('teams/deployers'), { headers: bearer(hop1.spec.key) })).status).toBe(401);

    const after = await server.fetch(url('teams/deployers'), { headers: bearer(hop2.spec.key) });
    expect(after.status).toBe(401);
  });
});
