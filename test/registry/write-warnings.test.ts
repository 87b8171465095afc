/**
 * The kind's own warnings about an object written (kube's WarningsOnCreate / WarningsOnUpdate): a
 * Team naming a grant this API does not know is accepted with a warning on create, update, patch
 * and apply; a status write and a kind without such rules add none.
 */
import { describe, expect, it } from 'vitest';
import { newRegistry, accessKey, team } from './helpers.js';

const typo = { clusterRoles: [{ name: 'team-viewr' }] };
const warning = expect.stringMatching(/^spec\.clusterRoles\[0\]\.name: unknown cluster role "team-viewr": .*\(accepted, but it grants nothing on this API\)$/);

describe("the kind's warnings on a write", () => {
  it('a Team with an unknown grant is written with the warning on create, update, patch and apply', async () => {
    const { registry } = newRegistry();
    expect((await registry.teams.create(team('ok'))).warnings).toEqual([]);
    expect((await registry.teams.create(team('t', typo))).warnings).toEqual([warning]);
    const current = await registry.teams.get('t');
    expect((await registry.teams.update('t', { ...current, spec: { ...typo, displayName: 'T' } })).warnings).toEqual([warning]);
    expect((await registry.teams.patch('t', 'merge', { spec: { description: 'd' } })).warnings).toEqual([warning]);
    expect((await registry.teams.apply('a', team('a', typo), { fieldManager: 'ci' })).warnings).toEqual([warning]);
  });

  it('a status write and a kind without warning rules add none', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('t', typo));
    const current = await registry.teams.get('t');
    expect((await registry.teams.update('t', { ...current, status: {} }, { subresource: 'status' })).warnings).toEqual([]);
    expect((await registry.ownedaccesskeys.create(accessKey('k', { user: 'u' }))).warnings).toEqual([]);
  });
});
