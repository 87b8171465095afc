/**
 * sealedValue: the server's own read of a sealed field (the identity refresher's upstream refresh
 * token), opened with the binding to its object and field; a field never sealed reads undefined.
 */
import { describe, expect, it } from 'vitest';
import { newRegistry, accessKey, statusOf, team } from './helpers.js';

describe('sealedValue', () => {
  it('opens the sealed connectorData of a key; a field not sealed, or a key without any, is undefined; a Team, undefined; a missing key 404', async () => {
    const { registry } = newRegistry();
    const keys = registry.ownedaccesskeys;
    await keys.create(accessKey('sso', { user: 'ana', identity: { username: 'ana', connector: 'github', connectorData: 'upstream-refresh' } }));
    await keys.create(accessKey('plain', { user: 'bob' }));
    expect(await keys.sealedValue('sso', 'spec.identity.connectorData')).toBe('upstream-refresh');
    expect(await keys.sealedValue('sso', 'spec.oidcLogin.refreshToken')).toBeUndefined();
    expect(await keys.sealedValue('plain', 'spec.identity.connectorData')).toBeUndefined();
    // An object of a kind that seals nothing (a Team) has no sealed part at all.
    await registry.teams.create(team('t'));
    expect(await registry.teams.sealedValue('t', 'spec.identity.connectorData')).toBeUndefined();
    expect(await statusOf(keys.sealedValue('nope', 'spec.identity.connectorData'))).toMatchObject({ code: 404, reason: 'NotFound' });
  });
});
