/**
 * A team key made with a Login key has two owners, its Team and the Login key: it ends with the
 * sign-in all the same (401 at once, then collected), though its team lives on. In process, with a
 * Login key minted as the sign-in path does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { mintLoginKey } from '../../src/signin/mint.js';
import { create } from '../auth/fixture.js';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { eventually } from './fixture.js';

let server: InProcess;

describe('a team key made with a Login key', () => {
  beforeAll(async () => {
    server = await startInProcess();
    expect((await create(server, 'teams', { metadata: { name: 'ops' }, spec: { owner: { user: 'dee' } } })).status).toBe(201);
  });
  afterAll(() => server.close());

  it('is tied to the Login key besides its team, gets 401 once the Login key is gone, and is collected while the team stays', async () => {
    const identity = { userId: 'u-dee', username: 'dee', groups: [], connector: 'oidc', connectorData: '{"refreshToken":"rt"}' };
    const login = await mintLoginKey(server.registry, { username: 'dee', identity, ttlSeconds: 3600, requester: { username: 'dee' }, via: 'in a test' }, new Date());
    const res = await create(server, 'ownedaccesskeys', { metadata: { name: 'ops-ci' }, spec: { team: 'ops', ttl: 600 } }, login.key);
    expect(res.status).toBe(201);
    const made = (await res.json()) as OwnedAccessKey;
    expect(made.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}`)).toEqual([`OwnedAccessKey/${login.name}`, 'Team/ops']);
    const teams = () => fetch(`${server.api}/teams`, { headers: { Authorization: `Bearer ${made.spec.key}` } });
    expect((await teams()).status).toBe(200);
    await server.registry.ownedaccesskeys.delete(login.name, {});
    const refused = await teams();
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { message: string }).message).toBe(`the access key this key was made with ("${login.name}") no longer exists`);
    let left = true;
    await eventually('the team key is collected', () => {
      void server.registry.ownedaccesskeys.get('ops-ci').then(() => undefined, () => (left = false));
      return !left;
    });
    expect(await server.registry.teams.get('ops')).toBeDefined();
  });
});
