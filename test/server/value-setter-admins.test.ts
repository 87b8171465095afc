/**
 * Found by the review of stop 64's value-setter change: judging the setter by its user name alone
 * lost its groups and team keys (an administrator by group, a reconciler's team key: the keys they
 * made dropped the user's temporary access), judged it when the grant was used (an administrator
 * leaving locked out the keys they had made), and a re-enable made its writer the setter of a value
 * it never saw. An administrator is now recorded as such when it sets the value (`admin:`), and a
 * re-enable keeps the setter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { as, bearer, keyOf, valueSetterHarness } from './value-setter-harness.js';


describe("the value setter's standing rights", () => {
  let server: InProcess;
  const { url, made, setterOf, onCall } = valueSetterHarness(() => server);
  const readsProd = async (value: string) => (await server.fetch(url('teams/prod-admins'), { headers: bearer(value) })).status;

  let byOlga = '';
  let byTeamKey = '';

  beforeAll(async () => {
    server = await startInProcess();
    // Administrators by group (as an identity provider's group reaches them), and the reconciler's team.
    await made('teams', { metadata: { name: 'platform-admins' }, spec: { groups: ['ops'], clusterRoles: [{ name: 'management-admin' }] } });
    await made('teams', { metadata: { name: 'gitops' }, spec: { clusterRoles: [{ name: 'management-admin' }] } });
    await made('teams', { metadata: { name: 'prod-admins' }, spec: { owner: { user: 'admin' }, clusterRoles: [{ name: 'teams-admin' }], accessRequests: { maxDuration: '4h' } } });
    await made('ownedaccesskeys', { metadata: { name: 'olga-key' }, spec: { user: 'olga', groups: ['ops'], key: keyOf('olga') } });
    await made('ownedaccesskeys', { metadata: { name: 'gitops-key' }, spec: { team: 'gitops', key: keyOf('gitops') } });
    await made('ownedaccesskeys', { metadata: { name: 'dan-key' }, spec: { user: 'dan', key: keyOf('dan') } });
    // olga is a management-admin: she may make anyone a key.
    expect((await server.fetch(url('teams/prod-admins'), { headers: as('olga') })).status).toBe(200);
    byOlga = (await made('ownedaccesskeys', { metadata: { name: 'dan-by-olga' }, spec: { user: 'dan' } }, as('olga'))).spec!.key!;
    byTeamKey = (await made('ownedaccesskeys', { metadata: { name: 'dan-by-gitops' }, spec: { user: 'dan' } }, as('gitops'))).spec!.key!;
    expect(await setterOf('dan-by-olga')).toBe('admin:olga');
    expect(await setterOf('dan-by-gitops')).toBe('admin:team:gitops');
    await onCall('dan');
  });
  afterAll(() => server.close());

  it("dan's key set by the bootstrap admin carries the approval", async () => {
    expect(await readsProd(keyOf('dan'))).toBe(200);
  });

  it('a key made by a management-admin by group carries it', async () => {
    expect(await readsProd(byOlga)).toBe(200);
  });

  it("a key made by a management-admin team key (a reconciler's) carries it", async () => {
    expect(await readsProd(byTeamKey)).toBe(200);
  });

  it('the setter leaving the admin team later changes nothing: the setter is judged when it set the value', async () => {
    await made('teams', { metadata: { name: 'admins2' }, spec: { users: ['pat'], clusterRoles: [{ name: 'management-admin' }] } });
    await made('ownedaccesskeys', { metadata: { name: 'pat-key' }, spec: { user: 'pat', key: keyOf('pat') } });
    const byPat = (await made('ownedaccesskeys', { metadata: { name: 'dan-by-pat' }, spec: { user: 'dan' } }, as('pat'))).spec!.key!;
    expect(await readsProd(byPat)).toBe(200);
    // pat moves on; dan, on call, is locked out of the access just approved to him, on the key he uses.
    const res = await server.fetch(url('teams/admins2'), { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { users: [] } }) });
    expect(res.status).toBe(200);
    expect(await readsProd(byPat)).toBe(200);
  });

  it("an accesskeys-admin re-enabling eve's own key (a value it never saw) leaves eve its setter", async () => {
    await made('teams', { metadata: { name: 'helpdesk' }, spec: { users: ['hd'], clusterRoles: [{ name: 'accesskeys-admin' }, { name: 'teams-viewer' }] } });
    await made('ownedaccesskeys', { metadata: { name: 'hd-key' }, spec: { user: 'hd', key: keyOf('hd') } });
    await made('ownedaccesskeys', { metadata: { name: 'eve-key' }, spec: { user: 'eve', key: keyOf('eve') } });
    const own = (await made('ownedaccesskeys', { metadata: { name: 'eve-own' }, spec: { user: 'eve', ttl: 86400 } }, as('eve'))).spec!.key!;
    // The unused-key sweep (or a leak scare) disabled it; the helpdesk enables it again.
    const patch = (body: unknown) => server.fetch(url('ownedaccesskeys/eve-own'), { method: 'PATCH', headers: { ...as('hd'), 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify(body) });
    expect((await patch({ spec: { disabled: true } })).status).toBe(200);
    expect((await patch({ spec: { disabled: false } })).status).toBe(200);
    expect(await setterOf('eve-own')).toBe('user:eve');
    await onCall('eve');
    expect(await readsProd(keyOf('eve'))).toBe(200);
    expect(await readsProd(own)).toBe(200);
  });
});
