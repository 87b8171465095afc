/**
 * Found by a review (stop 64): a key made for a user by someone else (an accesskeys-admin, an
 * impersonator, the writer of a FederatedCredential for the user) was judged by the user's standing
 * membership alone, but every request the key makes carries the user's Active AccessRequests
 * (authenticate.ts), and any key of a break-glass user may take that membership at will. So a
 * key-maker lacking what a user on call holds got it through a key for that user. A key for another
 * user now counts both (auth/escalation.ts reachOf); a user's own keys are unchanged.
 *
 * Found by the review of that fix: a key made for the user *before* the user went on call carried
 * every later approval to its maker. The server records who set a key's value
 * (management.service/value-set-by), and a user's temporary access rides only on keys whose value
 * the user set, or whose setter holds that access (auth/temporary-access.ts grantsCarried).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;
const as = (who: string) => ({ ...json, Authorization: `Bearer ${keyOf(who)}` });
const accessRequest = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { name }, spec });
const rule = (name: string, user: string) => ({ apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name }, spec: { issuer: 'https://ci.acme.internal', audiences: ['teamkeys'], claims: { project: 'tools' }, user } });

describe('a key made for a user with temporary access', () => {
  let server: InProcess;
  const url = (path: string) => `${server.api}/${path}`;
  const post = async (path: string, body: unknown, headers: Record<string, string> = json) => {
    const res = await server.fetch(url(path), { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { message?: string; spec?: { key?: string } } };
  };
  const made = async (path: string, body: unknown) => expect((await post(path, body)).status).toBe(201);

  beforeAll(async () => {
    server = await startInProcess();
    // keymaster may make keys for users whose grants it holds (accesskeys-admin), and read teams.
    await made('teams', { metadata: { name: 'keyadmins' }, spec: { users: ['keymaster'], clusterRoles: [{ name: 'accesskeys-admin' }, { name: 'teams-viewer' }] } });
    // sam may act as users whose rights he holds (impersonator).
    await made('teams', { metadata: { name: 'support' }, spec: { users: ['sam'], clusterRoles: [{ name: 'impersonator' }, { name: 'accesskeys-admin' }, { name: 'teams-viewer' }] } });
    await made('teams', { metadata: { name: 'prod-admins' }, spec: { owner: { user: 'admin' }, clusterRoles: [{ name: 'management-admin' }], accessRequests: { maxDuration: '4h' } } });
    await made('teams', { metadata: { name: 'on-call' }, spec: { owner: { user: 'admin' }, clusterRoles: [{ name: 'teams-admin' }], accessRequests: { breakGlass: { users: ['bella'] } } } });
    for (const who of ['alice', 'keymaster', 'bella', 'carol', 'sam']) await made('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
    expect((await post('accessrequests', accessRequest('alice-prod', { team: 'prod-admins', duration: '4h', reason: 'INC-1' }), as('alice'))).status).toBe(201);
    const seen = (await (await server.fetch(url('accessrequests/alice-prod'))).json()) as { status?: { conditions?: unknown[] } };
    const approval = { ...seen, status: { ...seen.status, conditions: [...(seen.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'ByHand', message: 'ok' }] } };
    expect((await server.fetch(url('accessrequests/alice-prod/approval'), { method: 'PUT', headers: json, body: JSON.stringify(approval) })).status).toBe(200);
  });
  afterAll(() => server.close());

  it("is refused to a key-maker who lacks what the user's Active AccessRequest gives, as a key and as a FederatedCredential", async () => {
    const key = await post('ownedaccesskeys', { metadata: { name: 'alice-by-keymaster' }, spec: { user: 'alice' } }, as('keymaster'));
    expect(key.status).toBe(403);
    expect(key.body.message).toContain('the key would hold cluster role "management-admin", which you do not hold: its user "alice" has it from an Active AccessRequest or may take it by breaking the glass');
    const fc = await post('federatedcredentials', rule('alice-ci', 'alice'), as('keymaster'));
    expect(fc.status).toBe(403);
    expect(fc.body.message).toContain('cluster role "management-admin"');
    // Acting as alice (impersonation judges her standing rights) makes no key carrying her request either.
    const acting = await post('ownedaccesskeys', { metadata: { name: 'alice-by-sam' }, spec: { user: 'alice', ttl: 3600 } }, { ...as('sam'), 'Impersonate-User': 'alice' });
    expect(acting.status).toBe(403);
    expect(acting.body.message).toContain('its user "alice" has it from an Active AccessRequest');
    // A user without temporary access gets a key from keymaster as before; alice makes her own.
    expect((await post('ownedaccesskeys', { metadata: { name: 'carol-by-keymaster' }, spec: { user: 'carol' } }, as('keymaster'))).status).toBe(201);
    expect((await post('ownedaccesskeys', { metadata: { name: 'alice-own' }, spec: { user: 'alice', ttl: 3600 } }, as('alice'))).status).toBe(201);
  });

  it('is refused for a break-glass user: any key of the user may take the membership at will', async () => {
    const key = await post('ownedaccesskeys', { metadata: { name: 'bella-by-keymaster' }, spec: { user: 'bella' } }, as('keymaster'));
    expect(key.status).toBe(403);
    expect(key.body.message).toContain('cluster role "teams-admin"');
    expect(key.body.message).toContain('its user "bella" has it from an Active AccessRequest or may take it by breaking the glass');
    // The administrator holds it all: the key is made.
    expect((await post('ownedaccesskeys', { metadata: { name: 'bella-by-admin' }, spec: { user: 'bella' } })).status).toBe(201);
  });

  it("made before the user goes on call, carries none of the user's later access to its maker; the user's own keys do", async () => {
    // dan is not on call yet: keymaster makes him a key, and holds its value.
    await made('ownedaccesskeys', { metadata: { name: 'dan-key' }, spec: { user: 'dan', key: keyOf('dan') } });
    const early = await post('ownedaccesskeys', { metadata: { name: 'dan-by-keymaster' }, spec: { user: 'dan' } }, as('keymaster'));
    expect(early.status).toBe(201);
    const value = early.body.spec!.key!;
    const read = async (path: string) => (await server.fetch(url(path))).json() as Promise<{ metadata: { annotations?: Record<string, string> } }>;
    expect((await read('ownedaccesskeys/dan-by-keymaster')).metadata.annotations?.['management.service/value-set-by']).toBe('user:keymaster');
    expect((await read('ownedaccesskeys/dan-key')).metadata.annotations?.['management.service/value-set-by']).toBe('admin:admin');
    expect((await post('accessrequests', accessRequest('dan-prod', { team: 'prod-admins', duration: '4h', reason: 'INC-2' }), as('dan'))).status).toBe(201);
    const seen = (await (await server.fetch(url('accessrequests/dan-prod'))).json()) as { status?: { conditions?: unknown[] } };
    const approval = { ...seen, status: { ...seen.status, conditions: [...(seen.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'ByHand', message: 'ok' }] } };
    expect((await server.fetch(url('accessrequests/dan-prod/approval'), { method: 'PUT', headers: json, body: JSON.stringify(approval) })).status).toBe(200);
    // keymaster's key for dan: no management-admin (keymaster does not hold it).
    const bearer = { ...json, Authorization: `Bearer ${value}` };
    expect((await server.fetch(url('teams/prod-admins'), { method: 'DELETE', headers: bearer })).status).toBe(403);
    // dan's key, its value set by the administrator (who holds it all): carries it.
    expect((await server.fetch(url('teams/keyadmins'), { headers: as('dan') })).status).toBe(200);
    // Nobody but the server writes who set a value: keymaster's claim that dan set it is dropped,
    // and a PUT without the annotation (git's sync-strategy: replace) keeps it.
    const claim = await server.fetch(url('ownedaccesskeys/dan-by-keymaster'), { method: 'PATCH', headers: { ...as('keymaster'), 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { annotations: { 'management.service/value-set-by': 'user:dan', note: 'x' } } }) });
    expect(claim.status).toBe(200);
    expect((await read('ownedaccesskeys/dan-by-keymaster')).metadata.annotations).toEqual({ note: 'x', 'management.service/value-set-by': 'user:keymaster' });
    const current = (await read('ownedaccesskeys/dan-by-keymaster')) as { metadata: Record<string, unknown> };
    const put = await server.fetch(url('ownedaccesskeys/dan-by-keymaster'), { method: 'PUT', headers: json, body: JSON.stringify({ ...current, metadata: { ...current.metadata, annotations: {} } }) });
    expect(put.status).toBe(200);
    expect((await read('ownedaccesskeys/dan-by-keymaster')).metadata.annotations).toEqual({ 'management.service/value-set-by': 'user:keymaster' });
    expect((await server.fetch(url('teams/prod-admins'), { method: 'DELETE', headers: bearer })).status).toBe(403);
  });

  it("is made once the user's request has ended", async () => {
    expect((await server.fetch(url('accessrequests/alice-prod'), { method: 'DELETE', headers: as('alice') })).status).toBe(200);
    const key = await post('ownedaccesskeys', { metadata: { name: 'alice-after' }, spec: { user: 'alice' } }, as('keymaster'));
    expect(key.status, key.body.message).toBe(201);
  });
});
