/**
 * What the identity refresher does with keys it must leave ended, and with an identity it cannot
 * write (found by a review): a key past --identity-max-staleness was refreshed back to life when
 * the provider returned, and an answer too large for the key's schema left the old groups on a
 * working key. The provider is a stand-in (Provider.refresh is all the refresher calls); the server
 * is in-process.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectorIdentity, OwnedAccessKey } from '../../src/api/types.js';
import { refusedAnnotation } from '../../src/auth/login-keys.js';
import { mintLoginKey } from '../../src/signin/mint.js';
import { SignInMetrics } from '../../src/signin/metrics.js';
import type { Provider, RefreshAnswer } from '../../src/signin/provider.js';
import { IdentityRefresher } from '../../src/signin/refresh.js';
import { json } from '../auth/fixture.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

let server: InProcess;
let answer: (identity: ConnectorIdentity) => RefreshAnswer;
const provider = {
  metrics: new SignInMetrics(),
  refresh: async (): Promise<RefreshAnswer> => answer(current!),
} as unknown as Provider;
let current: ConnectorIdentity | undefined;

const identity = (user: string): ConnectorIdentity => ({ userId: `u-${user}`, username: user, groups: ['payments-devs'], connector: 'oidc', connectorData: '{"refreshToken":"rt"}' });
const mint = (user: string, at = new Date()) => {
  current = identity(user);
  return mintLoginKey(server.registry, { username: user, identity: current, refreshToken: 'rt', ttlSeconds: 3600, requester: { username: user }, via: 'in a test' }, at);
};
const as = (key: string) => ({ ...json, Authorization: `Bearer ${key}` });
const review = async (key: string) => {
  const res = await fetch(`${server.api.replace(/\/apis\/management.service\/v1$/, "")}/apis/authentication.k8s.io/v1/selfsubjectreviews`, { method: 'POST', headers: as(key), body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }) });
  return { status: res.status, body: (await res.json()) as { status?: { userInfo?: { groups?: string[] } }; message?: string } };
};
const stored = async (name: string) => (await server.registry.ownedaccesskeys.get(name)) as OwnedAccessKey;

describe('the identity refresher ends what it cannot refresh', () => {
  let refresher: IdentityRefresher;
  beforeAll(async () => {
    server = await startInProcess();
    refresher = new IdentityRefresher(server.registry, provider, pino({ level: 'silent' }), { intervalMs: 15 * 60_000, concurrency: 1 });
  });
  afterAll(() => server.close());

  it('a Login key past --identity-max-staleness, which its holder could not log out (401), stays ended when the provider is back', async () => {
    // The provider was down for 25 hours: the key fails closed, telling its holder to sign in again.
    const stale = await mint('lena', new Date(Date.now() - 25 * 3600_000));
    expect((await review(stale.key)).status).toBe(401);
    // teamkeys logout: the DELETE with the key itself is a 401, so the CLI only forgets the key (cli/logout.ts).
    const del = await fetch(`${server.api}/ownedaccesskeys/${stale.name}`, { method: 'DELETE', headers: as(stale.key) });
    expect(del.status).toBe(401);
    // The provider is back; the leader's refresher takes every Login key that is due, the stale one included.
    answer = (id) => ({ outcome: 'refreshed', username: id.username!, identity: { ...id, connectorData: undefined } as ConnectorIdentity, refreshToken: 'rt2' });
    await refresher.refreshDue();
    expect((await stored(stale.name)).spec.identity?.connectorData).toBeUndefined(); // (write-only: never read back)
    // The key its holder signed out of, which told them "run teamkeys login", stays ended, marked so.
    expect((await review(stale.key)).status).toBe(401);
    expect((await stored(stale.name)).metadata.annotations?.[refusedAnnotation]).toContain('not refreshed within --identity-max-staleness');
  });

  it("groups removed at the provider, with an identity the key's schema cannot hold: the key does not keep its old groups", async () => {
    const key = await mint('mira');
    expect((await review(key.key)).body.status?.userInfo?.groups).toContain('payments-devs');
    // The person is removed from payments-devs; the provider's answer also carries more string
    // claims than identity.extraClaims holds (100), e.g. attributes the person may edit themselves.
    const extraClaims = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`attr${i}`, 'x']));
    answer = (id) => ({ outcome: 'refreshed', username: id.username!, identity: { userId: id.userId, username: id.username, groups: [], connector: 'oidc', extraClaims }, refreshToken: 'rt' });
    const outcome = await refresher.refresh(await stored(key.name));
    const after = await stored(key.name);
    const r = await review(key.key);
    // The sign-in ends: never the old groups on a working key.
    expect([outcome, r.status]).toEqual(['refused', 401]);
    expect(after.metadata.annotations?.[refusedAnnotation]).toContain("the identity provider's answer cannot be stored on the key");
  });
});
