/**
 * The first account signed in under a username keeps it (mint.ts heldByAnotherAccount). A review
 * found the check and the create were two steps: two accounts of the provider sharing a name,
 * signing in for the first time at the same moment, both got a key acting as that name. Mints of
 * one username now run one after another on a server; mints of different usernames still overlap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { mintLoginKey } from '../../src/signin/mint.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

describe('first sign-ins under one username at the same moment', () => {
  let server: InProcess;
  beforeAll(async () => {
    server = await startInProcess();
  });
  afterAll(() => server.close());

  const mint = (username: string, account: string) =>
    mintLoginKey(server.registry, { username, identity: { connector: 'oidc', userId: account, username, groups: [] }, ttlSeconds: 3600, requester: { username }, via: 'in a test' }, new Date());

  it('for different accounts: exactly one account gets a key in that name, whatever the number racing', async () => {
    for (const racers of [2, 3, 8]) {
      const username = `shared-${racers}`;
      const outcomes = await Promise.allSettled(Array.from({ length: racers }, (_, i) => mint(username, `account-${i}`)));
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(won, `${racers} racing`).toHaveLength(1);
      for (const l of lost) expect(l.reason).toMatchObject({ code: 403, message: `${username} is signed in with another account of the identity provider: an account that only shares the name does not sign in as them; ask your administrator` });
      const held = (await server.registry.ownedaccesskeys.byField('holder', username)) as OwnedAccessKey[];
      expect(new Set(held.map((k) => k.spec.identity?.userId)).size).toBe(1);
    }
  });

  it('for one account (two terminals): both sign in', async () => {
    const both = await Promise.allSettled([mint('twice', 'account-t'), mint('twice', 'account-t')]);
    expect(both.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled']);
  });

  it('a refused mint does not hold back the next one under its name', async () => {
    await expect(mint('after', 'account-a')).resolves.toMatchObject({ user: 'after' });
    await expect(mint('after', 'account-b')).rejects.toMatchObject({ code: 403 });
    await expect(mint('after', 'account-a')).resolves.toMatchObject({ user: 'after' });
  });
});
