/**
 * The issuers' keys (src/federation/issuer-keys.ts) against an HTTPS issuer the test starts, whose
 * discovery document can be made to fail: while it fails, lookups are refused without asking the
 * issuer again for 30 s (a review found every exchange naming a trusted issuer that is down cost an
 * outbound request), then asked again; once it answers, its keys are used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IssuerKeys } from '../../src/federation/issuer-keys.js';
import { startIssuer, type TestIssuer } from './issuer.js';

describe("a trusted issuer's discovery document that fails", () => {
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await startIssuer();
  });
  afterAll(() => issuer.close());

  it('is asked again only after 30 s, and its keys are used once it answers', async () => {
    let now = 1_000_000;
    const keys = new IssuerKeys({ ca: issuer.ca, now: () => now });
    issuer.failDiscovery(true);
    const before = issuer.discoveryFetches();
    await expect(keys.keysOf(issuer.url)).rejects.toThrow("the issuer's discovery document answered 503");
    for (let i = 0; i < 10; i++) await expect(keys.keysOf(issuer.url)).rejects.toThrow('answered 503');
    expect(issuer.discoveryFetches() - before).toBe(1);
    now += 29_000;
    await expect(keys.keysOf(issuer.url)).rejects.toThrow('answered 503');
    expect(issuer.discoveryFetches() - before).toBe(1);
    now += 1_000;
    issuer.failDiscovery(false);
    const resolver = await keys.keysOf(issuer.url);
    expect(typeof resolver).toBe('function');
    expect(issuer.discoveryFetches() - before).toBe(2);
    // Kept for its hour: no more discovery.
    await keys.keysOf(issuer.url);
    expect(issuer.discoveryFetches() - before).toBe(2);
  });
});
