/**
 * Identities are remembered per key version and team-index generation: a change to the key or to
 * any team is seen by the next request after the index has it, never a stale identity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, startInProcess, type InProcess } from '../server/in-process.js';
import { create, json } from './fixture.js';
import { eventually } from '../support/eventually.js';

describe('remembered identities', () => {
  let server: InProcess;
  let key = '';
  const teamsGet = async () => (await server.fetch(`${server.api}/teams/ops-x`, { headers: { Authorization: `Bearer ${key}` } })).status;
  const patchAs = (path: string, body: unknown) =>
    server.fetch(`${server.api}/${path}`, { method: 'PATCH', headers: { ...adminHeaders, 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    server = await startInProcess();
    expect((await create(server, 'teams', { metadata: { name: 'ops-x' }, spec: { users: ['rita'], clusterRoles: [{ name: 'teams-viewer' }] } }, undefined)).status).toBe(201);
    const res = await create(server, 'ownedaccesskeys', { metadata: { name: 'rita-key' }, spec: { user: 'rita' } });
    key = ((await res.json()) as { spec: { key: string } }).spec.key;
  });
  afterAll(() => server.close());

  it('follows membership and key changes from one request to the next', async () => {
    expect(await teamsGet()).toBe(200);
    expect(await teamsGet()).toBe(200);
    // Out of the team: the remembered identity (with teams-viewer) must not outlive the change.
    expect((await patchAs('teams/ops-x', { spec: { users: ['someone-else'] } })).status).toBe(200);
    await eventually('the revoked grant is refused', async () => (await teamsGet()) === 403);
    // Back in: and the key disabled, which a new key version carries.
    expect((await patchAs('teams/ops-x', { spec: { users: ['rita'] } })).status).toBe(200);
    await eventually('the restored grant is served', async () => (await teamsGet()) === 200);
    expect((await patchAs('ownedaccesskeys/rita-key', { spec: { disabled: true } })).status).toBe(200);
    expect(await teamsGet()).toBe(401);
  });
});
