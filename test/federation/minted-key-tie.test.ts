/**
 * Found by a review (stop 64): a key made with a key the token exchange minted is tied to it by an
 * ownerReference the server sets (docs/federated.md: "it stops when the minted key stops, or its
 * rule goes or changes"). The tie to a Login key could be removed only by an accesskeys-admin
 * (owner-admission.ts signInTieDenial), but the tie to a live minted key was removable by the job
 * itself, with a plain JSON patch, and the key it made then survived the rule's narrowing and the
 * minted key's revocation. Now the minted key's tie is held as a Login key's is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { mintFederatedKey } from '../../src/federation/mint.js';
import type { FederatedCredential } from '../../src/api/types.js';

const json = { 'Content-Type': 'application/json' };
const bearer = (value: string) => ({ ...json, Authorization: `Bearer ${value}` });

describe('a CI job may not cut the tie of the keys it makes to its minted key', () => {
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
    // As the exchange mints (the same function, the same annotations and owner reference).
    minted = (await mintFederatedKey(server.registry, (await rule.json()) as FederatedCredential, job, 3600, { username: `job:${job}` })).key;
  });
  afterAll(() => server.close());

  it('the job is refused (403), and the key it made stops with the minted key', async () => {
    const made = await server.fetch(url('ownedaccesskeys'), { method: 'POST', headers: bearer(minted), body: JSON.stringify({ metadata: { name: 'derived' }, spec: { user: 'deployer', ttl: 3000 } }) });
    expect(made.status, await made.clone().text()).toBe(201);
    const derived = (await made.json()) as { metadata: { ownerReferences?: { kind: string }[] }; spec: { key: string } };
    expect(derived.metadata.ownerReferences?.map((r) => r.kind)).toEqual(['OwnedAccessKey']);

    // The job removes the server's tie with its own minted key.
    const cut = await server.fetch(url('ownedaccesskeys/derived'), { method: 'PATCH', headers: { ...bearer(minted), 'Content-Type': 'application/json-patch+json' }, body: JSON.stringify([{ op: 'remove', path: '/metadata/ownerReferences' }]) });
    expect(cut.status).toBe(403);
    expect(((await cut.json()) as { message: string }).message).toContain('removing the reference to the key the token exchange minted, which this key was made with, requires the accesskeys-admin role');

    // Incident response: the glob is narrowed, and the minted key is reported leaked (anonymous revoke).
    const narrowed = await server.fetch(url('federatedcredentials/derive'), { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { claims: { repository_id: '7272', ref: 'refs/heads/main' } } }) });
    expect(narrowed.status).toBe(200);
    const revoked = await fetch(`${server.base}/auth/revoke`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `token=${minted}` });
    expect(revoked.status).toBe(200);
    expect((await server.fetch(url('teams/deployers'), { headers: bearer(minted) })).status).toBe(401);

    // The derived key must stop with them; it keeps working (until its own ttl).
    const after = await server.fetch(url('teams/deployers'), { headers: bearer(derived.spec.key) });
    expect(after.status, 'the derived key after the rule was narrowed and the minted key revoked').toBe(401);
  });
});
