/**
 * A minted key never outlives its rule (DECISIONS.md 11): authentication reads the FederatedCredential
 * that minted the key, and refuses it when the rule is gone, being deleted, or changed since the
 * mint. Before, a rule held by a finalizer, or narrowed during an incident, left its keys working
 * until their ttl (found by a review).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { create } from '../auth/fixture.js';
import { exchangeWorld } from './exchange-world.js';

describe('a key minted by a FederatedCredential', () => {
  const { h, exchange, rule, as } = exchangeWorld();
  beforeAll(async () => {
    expect((await create(h.server, 'teams', { metadata: { name: 'ops' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
  });

  it('a rule deleted (a finalizer keeps it terminating) ends its keys at once, as a deleted Login key ends the keys made with it', async () => {
    expect((await rule('held', { team: 'ops', claims: { repository_id: '5151' } }, { finalizers: ['example.com/hold'] })).status).toBe(201);
    const minted = await exchange(await h.issuer.token({ repository_id: '5151', sub: 'held' }));
    expect(minted.status, JSON.stringify(minted.body)).toBe(200);
    const key = String(minted.body.access_token);
    expect((await as(key, '/teams/ops')).status).toBe(200);
    expect((await h.server.fetch(`${h.server.api}/federatedcredentials/held`, { method: 'DELETE' })).status).toBe(200);
    // The exchange already refuses the terminating rule...
    expect((await exchange(await h.issuer.token({ repository_id: '5151', sub: 'held2' }))).status).toBe(400);
    // ...and the key it minted is refused at once, whatever the collector has done.
    const refused = await as(key, '/teams/ops');
    expect([refused.status, ((await refused.json()) as { message: string }).message]).toEqual([401, 'the FederatedCredential this key was minted by ("held") is being deleted']);
  });

  it('a rule narrowed (a too-wide glob fixed during an incident) ends the keys minted under the old claims', async () => {
    expect((await rule('wide', { team: 'ops', claims: { repository_id: '6161', ref: 'refs/heads/*' } })).status).toBe(201);
    const minted = await exchange(await h.issuer.token({ repository_id: '6161', ref: 'refs/heads/attacker', sub: 'wide' }));
    expect(minted.status, JSON.stringify(minted.body)).toBe(200);
    const key = String(minted.body.access_token);
    const narrowed = await h.server.fetch(`${h.server.api}/federatedcredentials/wide`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { claims: { ref: 'refs/heads/main' } } }) });
    expect(narrowed.status).toBe(200);
    // The rule (generation 2) no longer trusts refs/heads/attacker: the key minted at generation 1 stops.
    const refused = await as(key, '/teams/ops');
    expect([refused.status, ((await refused.json()) as { message: string }).message]).toEqual([401, 'the FederatedCredential this key was minted by ("wide") changed since']);
    // A key minted under the rule as it is now works.
    const again = await exchange(await h.issuer.token({ repository_id: '6161', ref: 'refs/heads/main', sub: 'wide' }));
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await as(String(again.body.access_token), '/teams/ops')).status).toBe(200);
  });

  it('a key whose owner references hold an odd item (a restore, a hand edit) is refused, not read as owned by nothing', async () => {
    // A rule for a user, not a team: a team key with unreadable references is refused by its team binding already.
    expect((await rule('odd', { user: 'opsbot', claims: { repository_id: '9191' } })).status).toBe(201);
    const minted = await exchange(await h.issuer.token({ repository_id: '9191', sub: 'odd' }), { federated_credential: 'odd' });
    const key = String(minted.body.access_token);
    const keys = (await (await h.server.fetch(`${h.server.api}/ownedaccesskeys`)).json()) as { items: { metadata: { name: string; ownerReferences?: { kind: string; name: string }[] } }[] };
    const name = keys.items.find((k) => (k.metadata.ownerReferences ?? []).some((r) => r.kind === 'FederatedCredential' && r.name === 'odd'))!.metadata.name;
    expect((await as(key, '/teams/ops')).status).toBe(403); // authenticated; opsbot may not read ops
    await h.server.registry.store.guaranteedUpdate(`/ownedaccesskeys/${name}`, undefined, (o: never) => {
      const obj = o as { metadata: { ownerReferences: unknown[] } };
      return { ...obj, metadata: { ...obj.metadata, ownerReferences: [...obj.metadata.ownerReferences, { kind: 'Legacy', name: 'x' }] } } as never;
    });
    const refused = await as(key, '/teams/ops');
    expect([refused.status, ((await refused.json()) as { message: string }).message]).toEqual([401, "the access key's owner references cannot be read"]);
  });

  it('a key made with a minted key ends with the rule as the minted key does (tied to it, as to a Login key)', async () => {
    expect((await create(h.server, 'teams', { metadata: { name: 'deployers' }, spec: { users: ['deployer'], clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
    expect((await rule('derive', { user: 'deployer', claims: { repository_id: '7272', ref: 'refs/heads/*' } })).status).toBe(201);
    const minted = String((await exchange(await h.issuer.token({ repository_id: '7272', ref: 'refs/heads/attacker', sub: 'x' }), { federated_credential: 'derive' })).body.access_token);
    // The minted key makes a plain key for its own user, expiring no later than itself.
    const made = await create(h.server, 'ownedaccesskeys', { metadata: { name: 'derived' }, spec: { user: 'deployer', ttl: 200 } }, minted);
    expect(made.status, await made.clone().text()).toBe(201);
    const derivedKey = (await made.json()) as { metadata: { ownerReferences?: { kind: string; name: string }[] }; spec: { key: string } };
    expect(derivedKey.metadata.ownerReferences?.map((r) => r.kind)).toEqual(['OwnedAccessKey']);
    expect((await as(derivedKey.spec.key, '/teams/deployers')).status).toBe(200);
    // The incident: the glob is fixed. Both keys stop.
    const narrowed = await h.server.fetch(`${h.server.api}/federatedcredentials/derive`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { claims: { ref: 'refs/heads/main' } } }) });
    expect(narrowed.status).toBe(200);
    expect((await as(minted, '/teams/deployers')).status).toBe(401);
    const refused = await as(derivedKey.spec.key, '/teams/deployers');
    expect([refused.status, ((await refused.json()) as { message: string }).message]).toEqual([401, expect.stringMatching(/^the access key this key was made with \(".+"\) no longer works: the FederatedCredential this key was minted by \("derive"\) changed since$/)]);
  });

  it('a label added to the rule (no change of its spec) leaves its keys working', async () => {
    expect((await rule('kept', { team: 'ops', claims: { repository_id: '8181' } })).status).toBe(201);
    const minted = await exchange(await h.issuer.token({ repository_id: '8181', sub: 'kept' }));
    const labelled = await h.server.fetch(`${h.server.api}/federatedcredentials/kept`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { labels: { tier: 'ci' } } }) });
    expect(labelled.status).toBe(200);
    expect((await as(String(minted.body.access_token), '/teams/ops')).status).toBe(200);
  });

  it("a key bound to a team created again after the exchange checked the rule's team is refused (the rule trusts the old team)", async () => {
    expect((await create(h.server, 'teams', { metadata: { name: 'racy' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
    expect((await rule('racer', { team: 'racy', claims: { repository_id: '8282' } })).status).toBe(201);
    const minted = await exchange(await h.issuer.token({ repository_id: '8282', sub: 'racer' }));
    expect(minted.status, JSON.stringify(minted.body)).toBe(200);
    const key = String(minted.body.access_token);
    expect((await as(key, '/teams/racy')).status).toBe(200);
    // What the race leaves: the exchange checked the rule's team, an administrator deleted and
    // created the team again, and the mint bound the key to the new team. Here the rule is made
    // to trust an earlier uid instead; the key stays bound to the live team, as the mint bound it.
    await h.server.registry.store.guaranteedUpdate('/federatedcredentials/racer', undefined, (o: never) => {
      const obj = o as { metadata: { ownerReferences: { kind: string; uid: string }[] } };
      return { ...obj, metadata: { ...obj.metadata, ownerReferences: obj.metadata.ownerReferences.map((r) => (r.kind === 'Team' ? { ...r, uid: 'the-team-before' } : r)) } } as never;
    });
    const refused = await as(key, '/teams/racy');
    expect([refused.status, ((await refused.json()) as { message: string }).message]).toEqual([401, 'the FederatedCredential this key was minted by ("racer") trusts another team "racy" than this key\'s: the team was deleted and created again']);
  });
});

