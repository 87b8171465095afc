/**
 * The escalation model gains sign-ins: in random small worlds (the generators of
 * test/auth/model/world.ts), a sign-in by a random user with random provider groups grants exactly
 * what those groups and the user map to: the same permissions, over the model's probe set, as a
 * plain key for that user carrying those groups. After a refresh that changes the groups, the Login
 * key again holds exactly what the new groups map to. The permissions are read with the real
 * Authenticator and Authorizer (test/auth/model/harness.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { mintLoginKey } from '../../src/signin/mint.js';
import { keyValue, permissions, seed, settled, startModel, type Model } from '../auth/model/harness.js';
import { groups, users, world } from '../auth/model/world.js';

const runs = Number(process.env.SIGNIN_MODEL_RUNS ?? 25);
const ttlSeconds = 3600;

const signIn = fc.record({
  teams: world.map((w) => w.teams),
  user: fc.constantFrom(...users),
  groups: fc.subarray(groups),
  refreshed: fc.subarray(groups),
});

/** What a plain key for `user` with `groups` holds (the oracle), against what the Login key holds. */
async function compare(m: Model, login: string, user: string, held: string[]): Promise<void> {
  const name = `ref-${held.join('-') || 'none'}`;
  await m.registry.ownedaccesskeys.create({ metadata: { name }, spec: { user, ...(held.length ? { groups: held } : {}), ttl: ttlSeconds, ttlAfterLastActivity: true, key: keyValue(name, 1) } }, { fieldManager: 'test' });
  m.values.set(name, keyValue(name, 1));
  await settled(m);
  const perms = await permissions(m, new Date(), []);
  expect([...perms.get(login)!].sort(), `login key with groups ${JSON.stringify(held)}`).toEqual([...perms.get(name)!].sort());
  await m.registry.ownedaccesskeys.delete(name);
  m.values.delete(name);
}

describe('a sign-in grants exactly what the provider groups map to (model-based)', () => {
  it(`holds over ${runs} random worlds, sign-ins and refreshes`, async () => {
    await fc.assert(
      fc.asyncProperty(signIn, async (s) => {
        const m = await startModel();
        try {
          await seed(m, s.teams, []);
          const identity = { userId: `sub-${s.user}`, username: s.user, groups: s.groups, connector: 'oidc' };
          const minted = await mintLoginKey(m.registry, { username: s.user, identity, ttlSeconds, requester: { username: s.user }, via: 'in the model' }, new Date());
          m.values.set(minted.name, minted.key);
          await compare(m, minted.name, s.user, s.groups);
          // The refresher's write: the provider's groups changed.
          const current = (await m.registry.ownedaccesskeys.get(minted.name)) as OwnedAccessKey;
          await m.registry.ownedaccesskeys.update(minted.name, { ...current, spec: { ...current.spec, identity: { ...identity, groups: s.refreshed } } }, { fieldManager: 'teamkeys-signin' });
          await compare(m, minted.name, s.user, s.refreshed);
        } finally {
          await m.close();
        }
      }),
      { numRuns: runs },
    );
  }, 120_000);
});
