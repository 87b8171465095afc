/**
 * Found by a review (stop 63): any user may write a FederatedCredential acting for themselves, and
 * an exchange that named no rule took whichever rule matched. mallory's rule trusting every ref of
 * the repository made payments' unnamed exchanges ambiguous (refused), and answered a payments job
 * its own rule did not trust with a key acting as mallory (the job's writes, and the keys it made,
 * then mallory's). A rule acting for a user now answers only an exchange naming it.
 */
import { describe, expect, it } from 'vitest';
import { create } from '../auth/fixture.js';
import { exchangeWorld } from './exchange-world.js';

const malloryKey = `Mallory${'m'.repeat(40)}`;

describe("a user's own rule answers only exchanges that name it", () => {
  const { h, exchange, rule } = exchangeWorld();

  it("neither captures another team's job nor makes its unnamed exchanges ambiguous; named, it still works", async () => {
    expect((await create(h.server, 'teams', { metadata: { name: 'payments' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
    expect((await rule('payments-main', { team: 'payments', claims: { repository_id: '1001', ref: 'refs/heads/main' } })).status).toBe(201);
    // mallory: no team, no role, a key of her own; she writes a rule for herself matching every ref of the repository.
    expect((await create(h.server, 'ownedaccesskeys', { metadata: { name: 'mallory' }, spec: { user: 'mallory', key: malloryKey } })).status).toBe(201);
    const planted = await create(h.server, 'federatedcredentials', { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'mallory-wide' }, spec: { issuer: h.issuer.url, audiences: ['teamkeys'], claims: { repository_id: '1001', ref: 'refs/*' }, user: 'mallory' } }, malloryKey);
    expect(planted.status, await planted.clone().text()).toBe(201);

    // payments' job on main, naming no rule: its own rule answers, not ambiguity.
    const main = await exchange(await h.issuer.token({ sub: 'repo:acme/app:ref:refs/heads/main' }));
    expect(main.status, JSON.stringify(main.body)).toBe(200);
    const who = await fetch(`${h.server.base}/kubernetes/management/apis/authentication.k8s.io/v1/selfsubjectreviews`, { method: 'POST', headers: { Authorization: `Bearer ${main.body.access_token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }) });
    expect(((await who.json()) as { status: { userInfo: { username: string } } }).status.userInfo.username).toBe('team:payments');

    // payments' job on a feature branch, which its rule does not trust: refused, not given mallory's identity.
    const feature = await exchange(await h.issuer.token({ ref: 'refs/heads/feature', sub: 'repo:acme/app:ref:refs/heads/feature' }));
    expect(feature).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: "the token's claims match no FederatedCredential" } });

    // mallory's own jobs name her rule, and get her key.
    const named = await exchange(await h.issuer.token({ ref: 'refs/heads/mallory', sub: 'repo:acme/app:ref:refs/heads/mallory' }), { federated_credential: 'mallory-wide' });
    expect(named.status, JSON.stringify(named.body)).toBe(200);
  });
});
