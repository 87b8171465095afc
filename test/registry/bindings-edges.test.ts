/**
 * The server-set references of a key where the everyday tests do not go: a team key for a team
 * being deleted (refused, saying so), a key written by a signed-in person that already carries a
 * reference to their Login key (replaced, not doubled, the others kept).
 */
import { describe, expect, it } from 'vitest';
import { accessKey, newRegistry, statusOf, team } from './helpers.js';

describe('server-set references, edges', () => {
  it('a team key for a team being deleted: 422 saying the team is being deleted', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('t', {}, { finalizers: ['example.com/hold'] }));
    await registry.teams.delete('t');
    const status = await statusOf(registry.ownedaccesskeys.create(accessKey('k', { team: 't' })));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status.message).toContain('team "t" is being deleted');
  });

  it("a key made by a signed-in person: their Login key's reference replaces one the client wrote to it, the others kept", async () => {
    const { registry } = newRegistry();
    const { object: owner } = await registry.teams.create(team('owner'));
    const teamRef = { apiVersion: 'management.service/v1', kind: 'Team', name: 'owner', uid: owner.metadata.uid! };
    const stale = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', name: 'old-name', uid: 'login-uid' };
    const { object } = await registry.ownedaccesskeys.create(accessKey('k', { user: 'ana' }, { ownerReferences: [stale, teamRef] }), {
      signIn: { name: 'login-ana', uid: 'login-uid' },
    });
    expect(object.metadata.ownerReferences).toEqual([teamRef, { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', name: 'login-ana', uid: 'login-uid' }]);
  });
});
