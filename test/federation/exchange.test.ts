/**
 * The token exchange over HTTP against an HTTPS issuer the test starts (discovery, JWKS, RS256 via
 * jose): a matching job token gets a key with exactly the rule's rights and no longer than the
 * token lives; every other token is refused with an RFC 6749 error saying which check failed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { create } from '../auth/fixture.js';
import { eventually } from '../support/eventually.js';
import { startIssuer, type TestIssuer } from './issuer.js';

const grant = 'urn:ietf:params:oauth:grant-type:token-exchange';
const idToken = 'urn:ietf:params:oauth:token-type:id_token';

describe('token exchange: a job token for a short-lived key', () => {
  let server: InProcess;
  let issuer: TestIssuer;
  const exchange = async (token: string, extra: Record<string, string> = {}) => {
    const res = await fetch(`${server.base}/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: grant, subject_token: token, subject_token_type: idToken, ...extra }).toString(),
    });
    return { status: res.status, cache: res.headers.get('cache-control'), body: (await res.json()) as Record<string, string | number> };
  };
  const as = (key: string, path: string, init: RequestInit = {}) => fetch(`${server.api}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) } });
  const rule = (name: string, spec: Record<string, unknown>) =>
    create(server, 'federatedcredentials', { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name }, spec: { issuer: issuer.url, audiences: ['teamkeys'], ...spec } });

  beforeAll(async () => {
    issuer = await startIssuer();
    server = await startInProcess({ federation: { ca: issuer.ca, jwksCooldownMs: 0 } });
    for (const name of ['payments', 'ops']) expect((await create(server, 'teams', { metadata: { name }, spec: { clusterRoles: [{ name: 'teams-admin' }] } })).status).toBe(201);
    const pinned = { repository_id: '1001', repository_owner_id: '2002', ref: 'refs/heads/main' };
    expect((await rule('payments-main', { team: 'payments', claims: pinned, scope: { roles: [{ role: 'cli' }] }, ttl: 3600 })).status).toBe(201);
    expect((await rule('ops-release', { team: 'ops', claims: { repository_id: '1001', ref: 'refs/tags/v*', event_name: 'push' } })).status).toBe(201);
  });
  afterAll(async () => {
    await server.close();
    await issuer.close();
  });

  it('a matching token gets a key acting for the team with the rule\'s scope, living no longer than the token', async () => {
    const res = await exchange(await issuer.token({}, { ttl: 300 }));
    expect(res.status).toBe(200);
    expect(res.cache).toBe('no-store');
    expect(res.body).toMatchObject({ issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer' });
    expect(res.body.expires_in).toBeGreaterThan(200);
    expect(res.body.expires_in).toBeLessThanOrEqual(300);
    const key = String(res.body.access_token);
    // The team may administer teams; the rule's scope (role cli) leaves the key its reads only.
    expect((await as(key, '/teams/payments')).status).toBe(200);
    const write = await as(key, '/teams/payments', { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { description: 'x' } }) });
    expect(write.status).toBe(403);
    const review = await fetch(`${server.base}/kubernetes/management/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    });
    const who = ((await review.json()) as { status: { userInfo: { username: string; extra: Record<string, string[]> } } }).status.userInfo;
    expect(who.username).toBe('team:payments');
    expect(who.extra['management.service/job']).toEqual(['repository acme/app on refs/heads/main, workflow ci, run 42']);
    // The minted key: type Federated, owned by its rule, expiring with the token.
    const name = who.extra['management.service/access-key']![0]!;
    const stored = (await (await server.fetch(`${server.api}/ownedaccesskeys/${name}`)).json()) as { spec: { type: string; ttl: number; team: string }; metadata: { ownerReferences: { kind: string; name: string }[] } };
    expect(stored.spec).toMatchObject({ type: 'Federated', team: 'payments', ttl: res.body.expires_in });
    expect(stored.metadata.ownerReferences.map((r) => `${r.kind}/${r.name}`).sort()).toEqual(['FederatedCredential/payments-main', 'Team/payments']);
  });

  it('refuses a claim that does not match: the branch, the repository id, an event a fork can start', async () => {
    const branch = await exchange(await issuer.token({ ref: 'refs/heads/feature' }));
    expect(branch).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: "the token's claims match no FederatedCredential" } });
    const named = await exchange(await issuer.token({ ref: 'refs/heads/feature' }), { federated_credential: 'payments-main' });
    expect(named.body.error_description).toBe('the token\'s claim "ref" does not match the rule');
    // A re-created repository of the same name has another id: it inherits no trust.
    const recreated = await exchange(await issuer.token({ repository_id: '9999' }), { federated_credential: 'payments-main' });
    expect(recreated.body.error_description).toBe('the token\'s claim "repository_id" does not match the rule');
    const fork = await exchange(await issuer.token({ event_name: 'pull_request_target' }), { federated_credential: 'payments-main' });
    expect(fork.body.error_description).toBe('the token is from a pull_request_target event, which a fork can start: only a rule whose event_name names that event exactly trusts it');
    // A glob: any v* tag of the repository, on a push, acts for ops.
    expect((await exchange(await issuer.token({ ref: 'refs/tags/v1.2.0' }))).status).toBe(200);
  });

  it('refuses another audience, another issuer, an expired token and a key outside the JWKS', async () => {
    const aud = await exchange(await issuer.token({ aud: 'sts.amazonaws.com' }));
    expect(aud.body).toEqual({ error: 'invalid_grant', error_description: "the token's audience is not one a FederatedCredential of this issuer accepts" });
    const other = await exchange(await issuer.token({ iss: 'https://gitlab.example.com' }));
    expect(other.body).toEqual({ error: 'invalid_grant', error_description: 'no FederatedCredential trusts tokens of this issuer for an exchange naming none (a rule acting for a user answers only when named with federated_credential)' });
    const expired = await exchange(await issuer.token({ sub: 'expired' }, { now: new Date(Date.now() - 3600_000), ttl: 300 }));
    expect(expired.body).toEqual({ error: 'invalid_grant', error_description: 'the token has expired' });
    const forged = await exchange(await issuer.foreignToken({ sub: 'forged' }));
    expect(forged.body).toEqual({ error: 'invalid_grant', error_description: "the token's signature does not verify with the issuer's published keys" });
    const notJwt = await exchange('not-a-token');
    expect(notJwt).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });

  it('a token is exchanged once', async () => {
    const token = await issuer.token({ sub: 'replay' });
    expect((await exchange(token)).status).toBe(200);
    expect((await exchange(token)).body).toEqual({ error: 'invalid_grant', error_description: 'the token was exchanged already: a job token is exchanged once (jti)' });
  });

  it('after the issuer rotates its signing key, new tokens verify (one JWKS fetch) and tokens of the old key do not', async () => {
    const old = await issuer.token({ sub: 'before-rotation' });
    const before = issuer.jwksFetches();
    await issuer.rotate();
    expect((await exchange(await issuer.token({ sub: 'after-rotation' }))).status).toBe(200);
    expect(issuer.jwksFetches()).toBe(before + 1);
    expect((await exchange(old)).body.error_description).toBe("the token's signature does not verify with the issuer's published keys");
  });

  it('a rule deleted ends the keys it minted and their open watches', async () => {
    const res = await exchange(await issuer.token({ sub: 'deleted-rule' }));
    const key = String(res.body.access_token);
    const watch = await as(key, '/teams?watch=1');
    expect(watch.status).toBe(200);
    const ended = (async () => {
      const reader = watch.body!.getReader();
      while (!(await reader.read()).done);
      return true;
    })();
    expect((await server.fetch(`${server.api}/federatedcredentials/payments-main`, { method: 'DELETE' })).status).toBe(200);
    await eventually('the minted key stops working', async () => (await as(key, '/teams/payments')).status === 401);
    expect(await ended).toBe(true);
    const after = await exchange(await issuer.token({ sub: 'after-delete' }));
    expect(after.body).toEqual({ error: 'invalid_grant', error_description: "the token's claims match no FederatedCredential" });
  });

  it('answers 429 after repeated failures of one issuer and subject, not of another subject', async () => {
    for (let i = 0; i < 5; i++) expect((await exchange(await issuer.token({ sub: 'noisy', ref: 'refs/heads/x' }))).status).toBe(400);
    const limited = await exchange(await issuer.token({ sub: 'noisy', ref: 'refs/heads/x' }));
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('slow_down');
    expect((await exchange(await issuer.token({ sub: 'quiet', ref: 'refs/heads/x' }))).status).toBe(400);
  });

  it('is not spent by tokens the issuer did not sign: a stranger cannot lock a job out by naming its subject', async () => {
    expect((await rule('victim-main', { team: 'payments', claims: { repository_id: '7777' } })).status).toBe(201);
    const claims = { sub: 'repo:acme/victim:ref:refs/heads/main', repository_id: '7777' };
    // A forged token for the job's subject: the issuer's claims, a signature of nobody's.
    const forged = (await issuer.token(claims)).split('.').slice(0, 2).concat('AAAA').join('.');
    for (let i = 0; i < 8; i++) {
      const refused = await exchange(forged);
      expect(refused.status).toBe(400);
      expect(refused.body.error_description).toBe("the token's signature does not verify with the issuer's published keys");
    }
    // The job's own token still gets its key.
    const real = await exchange(await issuer.token(claims));
    expect(real.status, JSON.stringify(real.body)).toBe(200);
  });

  it('a rule stored for a user named team:<name> (before such names were refused) says so, and leaves the token unspent', async () => {
    const store = server.registry.federatedcredentials.ctx.store;
    const legacy = { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'legacy', uid: 'uid-legacy', creationTimestamp: '2026-11-01T00:00:00Z' }, spec: { issuer: issuer.url, audiences: ['legacy-aud'], claims: { repository_id: '7007' }, user: 'team:legacy' } };
    await store.create('/federatedcredentials/legacy', legacy as unknown as Parameters<typeof store.create>[1]);
    const token = await issuer.token({ repository_id: '7007', aud: 'legacy-aud', sub: 'repo:acme/legacy:ref:refs/heads/main' });
    const refused = await exchange(token, { federated_credential: 'legacy' });
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: 'the FederatedCredential\'s spec.user "team:legacy" is named like a team\'s keys (team:<name>), which no key may act for: set spec.team, or another user' } });
    // Renamed through the API, the same token (not spent) gets its key.
    const renamed = await server.fetch(`${server.api}/federatedcredentials/legacy`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { user: 'legacy-bot' } }) });
    expect(renamed.status, await renamed.clone().text()).toBe(200);
    const minted = await exchange(token, { federated_credential: 'legacy' });
    expect(minted.status, JSON.stringify(minted.body)).toBe(200);
  });
});
