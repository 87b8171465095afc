/**
 * The exchange's failure budget per issuer and subject is spent only by guesses at a rule's claims
 * (a verified token whose claims match no rule), each token once: one expired token, one signed for
 * another audience, or one mismatched token replayed, locked the subject's jobs out before (found by
 * a review).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { create } from '../auth/fixture.js';
import { exchangeWorld } from './exchange-world.js';

describe('the failure budget of an issuer and subject', () => {
  const { h, exchange, rule } = exchangeWorld();
  beforeAll(async () => {
    expect((await create(h.server, 'teams', { metadata: { name: 'payments' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
    expect((await rule('victim', { team: 'payments', claims: { repository_id: '4242' } })).status).toBe(201);
  });

  it('replaying a single expired token (e.g. one printed in an old CI log) five times does not refuse the job\'s next real token', async () => {
    const claims = { sub: 'repo:acme/victim:ref:refs/heads/main', repository_id: '4242' };
    // One token, signed by the issuer for this subject, long expired: worth nothing to its holder.
    const old = await h.issuer.token(claims, { now: new Date(Date.now() - 86_400_000), ttl: 300 });
    for (let i = 0; i < 5; i++) expect((await exchange(old)).body.error_description).toBe('the token has expired');
    // Every run of the job on main has this sub: its fresh token must still be exchanged.
    const real = await exchange(await h.issuer.token(claims));
    expect(real.status, JSON.stringify(real.body)).toBe(200);
  });

  it('nor does replaying a token the issuer signed for another audience (one handed to AWS, Vault, PyPI...)', async () => {
    const claims = { sub: 'repo:acme/victim:environment:prod', repository_id: '4242' };
    const forAws = await h.issuer.token({ ...claims, aud: 'sts.amazonaws.com' });
    for (let i = 0; i < 5; i++) expect((await exchange(forAws)).status).toBe(400);
    const real = await exchange(await h.issuer.token(claims));
    expect(real.status, JSON.stringify(real.body)).toBe(200);
  });

  it('a token whose claims match no rule is charged once however often it is replayed; distinct ones still reach the limit', async () => {
    const sub = 'repo:acme/victim:ref:refs/heads/release';
    const wrong = await h.issuer.token({ sub, repository_id: '9999' });
    for (let i = 0; i < 8; i++) expect((await exchange(wrong)).body.error_description).toBe("the token's claims match no FederatedCredential");
    expect((await exchange(await h.issuer.token({ sub, repository_id: '4242' }))).status).toBe(200);
    // Guesses with fresh tokens each: the budget (5) is spent, and the subject waits.
    for (let i = 0; i < 4; i++) expect((await exchange(await h.issuer.token({ sub, repository_id: `99${i}` }))).status).toBe(400);
    const limited = await exchange(await h.issuer.token({ sub, repository_id: '4242' }));
    expect([limited.status, limited.body.error]).toEqual([429, 'slow_down']);
  });
});

