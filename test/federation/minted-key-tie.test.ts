/**
 * Found by a review (stop 64): a key made with a key the token exchange minted is tied to it by an
 * ownerReference the server sets (docs/federated.md: "it stops when the minted key stops, or its
 * rule goes or changes"). The tie to a Login key could be removed only by an accesskeys-admin
 * (owner-admission.ts signInTieDenial), but the tie to a live minted key was removable by the job
 * itself, with a plain JSON patch, and the key it made then survived the rule's narrowing and the
 * minted key's revocation. Now the minted key's tie is held as a Login key's is.
 *
 * Found by a review of stop 64's fixes: the tie was one hop only. A key K made with the minted key
 * M was tied to M, but K's identity carried no sign-in (authenticate.ts signInOf set it for a
 * Login owner only), so a key made with K was tied to nothing, and outlived the rule's narrowing
 * and M's revocation. Every key made down the chain is now tied to M, as down a Login key's.
 */
import { describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { mintFederatedKey } from '../../src/federation/mint.js';
import type { FederatedCredential } from '../../src/api/types.js';

const json = { 'Content-Type': 'application/json' };
const bearer = (value: string) => ({ ...json, Authorization: `Bearer ${value}` });
const job = 'repository acme/app on refs/heads/attacker, workflow ci, run 1';

/** A server with a rule for user deployer and a key it minted for a job (each describe revokes its own). */
async function jobWorld(): Promise<{ server: InProcess; minted: string; url: (path: string) => string }> {
  const server = await startInProcess();
  const url = (path: string) => `${server.api}/${path}`;
  const team = await server.fetch(url('teams'), { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'deployers' }, spec: { users: ['deployer'], clusterRoles: [{ name: 'teams-viewer' }] } }) });
  expect(team.status).toBe(201);
  const rule = await server.fetch(url('federatedcredentials'), {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'derive' }, spec: { issuer: 'https://token.actions.githubusercontent.com', audiences: ['teamkeys'], claims: { repository_id: '7272', ref: 'refs/heads/*' }, user: 'deployer', ttl: 3600 } }),
  });
  expect(rule.status, await rule.clone().text()).toBe(201);
  // As the exchange mints (the same function, the same annotations and owner reference).
  const minted = (await mintFederatedKey(server.registry, (await rule.json()) as FederatedCredential, job, 3600, { username: `job:${job}` })).key;
  return { server, minted, url };
}

/** Incident response: the rule's glob is narrowed, and the minted key is reported leaked (anonymous revoke). */
async function endMinted({ server, minted, url }: Awaited<ReturnType<typeof jobWorld>>): Promise<void> {
  const narrowed = await server.fetch(url('federatedcredentials/derive'), { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { claims: { repository_id: '7272', ref: 'refs/heads/main' } } }) });
  expect(narrowed.status).toBe(200);
  const revoked = await fetch(`${server.base}/auth/revoke`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `token=${minted}` });
  expect(revoked.status).toBe(200);
  expect((await server.fetch(url('teams/deployers'), { headers: bearer(minted) })).status).toBe(401);
}

/** Runs `test` against a world of its own (each ends its minted key), closed after. */
const inJobWorld = (test: (w: Awaited<ReturnType<typeof jobWorld>>) => Promise<void>) => async () => {
  const w = await jobWorld();
  try {
    await test(w);
  } finally {
    await w.server.close();
  }
};

describe('the tie of the keys a CI job makes to its minted key', () => {
  it('a job may not cut it (403), and the key it made stops with the minted key', inJobWorld(async (w) => {
    const { server, minted, url } = w;
    const made = await server.fetch(url('ownedaccesskeys'), { method: 'POST', headers: bearer(minted), body: JSON.stringify({ metadata: { name: 'derived' }, spec: { user: 'deployer', ttl: 3000 } }) });
    expect(made.status, await made.clone().text()).toBe(201);
    const derived = (await made.json()) as { metadata: { ownerReferences?: { kind: string }[] }; spec: { key: string } };
    expect(derived.metadata.ownerReferences?.map((r) => r.kind)).toEqual(['OwnedAccessKey']);

    // The job removes the server's tie with its own minted key.
    const cut = await server.fetch(url('ownedaccesskeys/derived'), { method: 'PATCH', headers: { ...bearer(minted), 'Content-Type': 'application/json-patch+json' }, body: JSON.stringify([{ op: 'remove', path: '/metadata/ownerReferences' }]) });
    expect(cut.status).toBe(403);
    expect(((await cut.json()) as { message: string }).message).toContain('removing the reference to the key the token exchange minted, which this key was made with, requires the accesskeys-admin role');

    await endMinted(w);
    // The derived key must stop with them; it kept working (until its own ttl).
    const after = await server.fetch(url('teams/deployers'), { headers: bearer(derived.spec.key) });
    expect(after.status, 'the derived key after the rule was narrowed and the minted key revoked').toBe(401);
  }));

  it('a key made by a key made by the minted key is tied to the minted key too, and stops with it', inJobWorld(async (w) => {
    const { server, minted, url } = w;
    const first = await server.fetch(url('ownedaccesskeys'), { method: 'POST', headers: bearer(minted), body: JSON.stringify({ metadata: { name: 'hop1' }, spec: { user: 'deployer', ttl: 3000 } }) });
    expect(first.status, await first.clone().text()).toBe(201);
    const hop1 = (await first.json()) as { metadata: { ownerReferences?: { kind: string; name: string }[] }; spec: { key: string } };
    expect(hop1.metadata.ownerReferences?.map((r) => r.name)).toHaveLength(1);

    const second = await server.fetch(url('ownedaccesskeys'), { method: 'POST', headers: bearer(hop1.spec.key), body: JSON.stringify({ metadata: { name: 'hop2' }, spec: { user: 'deployer', ttl: 2000 } }) });
    expect(second.status, await second.clone().text()).toBe(201);
    const hop2 = (await second.json()) as { metadata: { ownerReferences?: { kind: string; name: string }[] }; spec: { key: string } };
    // Tied to the minted key itself, as hop1 is.
    expect(hop2.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}`)).toEqual(hop1.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}`));

    await endMinted(w);
    expect((await server.fetch(url('teams/deployers'), { headers: bearer(hop1.spec.key) })).status).toBe(401);
    const after = await server.fetch(url('teams/deployers'), { headers: bearer(hop2.spec.key) });
    expect(after.status).toBe(401);
  }));
});
