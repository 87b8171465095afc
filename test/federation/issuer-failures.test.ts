/**
 * Found by a review (stop 63): an issuer whose key set answered other than 200 made every exchange
 * fail as `invalid_grant: the token does not verify` (a job's token blamed for the issuer's outage,
 * so no retry), and jose keeps no memory of a failed fetch: each anonymous exchange naming the
 * issuer fetched its key set again. Now 503 `temporarily_unavailable`, and a failed fetch is
 * remembered for 30 s, as a failed discovery is.
 */
import { describe, expect, it } from 'vitest';
import { IssuerKeys } from '../../src/federation/issuer-keys.js';
import { create } from '../auth/fixture.js';
import { exchangeWorld } from './exchange-world.js';

describe("an issuer whose key set cannot be fetched", () => {
  const { h, exchange, rule } = exchangeWorld();

  it('answers 503 temporarily_unavailable and asks the issuer once for many exchanges', async () => {
    expect((await create(h.server, 'teams', { metadata: { name: 'payments' }, spec: {} })).status).toBe(201);
    expect((await rule('payments-main', { team: 'payments', claims: { repository_id: '1001', ref: 'refs/heads/main' } })).status).toBe(201);
    h.issuer.failJwks(true);
    const before = h.issuer.jwksFetches();
    for (let i = 0; i < 10; i++) {
      const refused = await exchange(await h.issuer.token({ sub: `outage-${i}` }));
      expect(refused).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
    }
    expect(h.issuer.jwksFetches() - before).toBe(1);
  });

  it('is asked again after 30 s, and its keys are used once it answers', async () => {
    let now = 1_000_000;
    const keys = new IssuerKeys({ ca: h.issuer.ca, cooldownMs: 0, now: () => now });
    const resolver = await keys.keysOf(h.issuer.url);
    const token = await h.issuer.token();
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { alg: string; kid: string };
    h.issuer.failJwks(true);
    const before = h.issuer.jwksFetches();
    await expect(resolver(header, {} as never)).rejects.toThrow('Expected 200 OK');
    for (let i = 0; i < 5; i++) await expect(resolver(header, {} as never)).rejects.toThrow('not asked again yet');
    expect(h.issuer.jwksFetches() - before).toBe(1);
    h.issuer.failJwks(false);
    now += 30_000;
    await expect(resolver(header, {} as never)).resolves.toBeTruthy();
    expect(h.issuer.jwksFetches() - before).toBe(2);
  });

  // The review's second pass: one failed refetch (an unknown kid anyone may put in a token) then
  // refused, for 30 s, the tokens whose keys were already fetched and still fresh.
  it('keeps verifying with keys fetched before while a failed refetch is remembered', async () => {
    const keys = new IssuerKeys({ ca: h.issuer.ca, cooldownMs: 0 });
    const resolver = await keys.keysOf(h.issuer.url);
    const token = await h.issuer.token();
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { alg: string; kid: string };
    await expect(resolver(header, {} as never)).resolves.toBeTruthy();
    h.issuer.failJwks(true);
    await expect(resolver({ ...header, kid: 'attacker-chosen' }, {} as never)).rejects.toThrow('Expected 200 OK');
    await expect(resolver(header, {} as never)).resolves.toBeTruthy();
    await expect(resolver({ ...header, kid: 'attacker-chosen' }, {} as never)).rejects.toThrow('no applicable key found');
    h.issuer.failJwks(false);
  });
});
