/**
 * The issuers' keys (src/federation/issuer-keys.ts) against an HTTPS issuer the test starts, whose
 * discovery document can be made to fail: while it fails, lookups are refused without asking the
 * issuer again for 30 s (a review found every exchange naming a trusted issuer that is down cost an
 * outbound request), then asked again; once it answers, its keys are used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IssuerKeys, maxIssuerBodyBytes } from '../../src/federation/issuer-keys.js';
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

  // Found by a review (stop 63): answers were read whole; a 400 MB discovery document took the
  // server from 137 MB to 1.7 GB, on one unsigned token naming an issuer any user's rule may name.
  it('reads an answer only up to its bound: a larger discovery document or key set is refused, a padded one within it is read', async () => {
    const limit = `the issuer's answer from ${issuer.url} is larger than ${maxIssuerBodyBytes} bytes`;
    issuer.bloat('discovery', 8 * 1024 * 1024);
    await expect(new IssuerKeys({ ca: issuer.ca }).keysOf(issuer.url)).rejects.toThrow(limit);
    issuer.bloat('discovery', 100 * 1024);
    const resolver = await new IssuerKeys({ ca: issuer.ca }).keysOf(issuer.url);
    const token = await issuer.token();
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { alg: string; kid: string };
    await expect(resolver(header, {} as never)).resolves.toBeTruthy();
    issuer.bloat('discovery', 0);
    issuer.bloat('jwks', 8 * 1024 * 1024);
    const bloated = await new IssuerKeys({ ca: issuer.ca, cooldownMs: 0 }).keysOf(issuer.url);
    await expect(bloated(header, {} as never)).rejects.toThrow(limit);
    issuer.bloat('jwks', 0);
  });
});
