/**
 * Three escalation paths an adversarial review found after issue 13 landed, each tried over HTTP:
 * roles held "by equivalent verbs" granting management-admin, a status write reviving an expired key
 * past its writer's own expiry, and a server-side apply creating what the key's scope forbids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create } from './fixture.js';

const merge = 'application/merge-patch+json';
const value = (name: string) => `Value${name.replace(/[^A-Za-z0-9]/g, '')}${'r'.repeat(40)}`;

describe('what the review of issue 13 found, refused', () => {
  let server: InProcess;
  const call = async (method: string, path: string, token: string | undefined, body?: unknown, type = 'application/json') => {
    const res = await server.fetch(`${server.api}${path}${path.includes('?') ? '&' : '?'}fieldManager=review`, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'Content-Type': type } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as { message?: string; reason?: string } };
  };
  const key = async (name: string, spec: Record<string, unknown>) =>
    expect((await create(server, 'ownedaccesskeys', { metadata: { name }, spec: { ...spec, key: value(name) } })).status).toBe(201);

  beforeAll(async () => {
    server = await startInProcess();
    for (const [name, spec] of Object.entries({
      both: { users: ['frank'], clusterRoles: [{ name: 'teams-admin' }, { name: 'accesskeys-admin' }] },
      keyadmins: { users: ['carol'], clusterRoles: [{ name: 'accesskeys-admin' }] },
      creators: { users: ['bob'], clusterRoles: [{ name: 'teams-creator' }] },
    })) expect((await create(server, 'teams', { metadata: { name }, spec })).status).toBe(201);
    await key('frank', { user: 'frank' });
    await key('carol', { user: 'carol', ttl: 600 });
    await key('bob-patch-only', { user: 'bob', scope: { rules: [{ verbs: ['patch', 'get'], resources: [{ group: 'management.service', resources: ['teams'] }] }] } });
  });
  afterAll(() => server.close());

  it('the verbs of teams-admin and accesskeys-admin together are not management-admin: it cannot be granted from them', async () => {
    const res = await call('POST', '/teams', value('frank'), { metadata: { name: 'esc' }, spec: { users: ['frank'], clusterRoles: [{ name: 'management-admin' }] } });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('management-admin');
    // What frank holds by name he may still grant.
    expect((await call('POST', '/teams', value('frank'), { metadata: { name: 'fine' }, spec: { users: ['frank'], clusterRoles: [{ name: 'teams-admin' }] } })).status).toBe(201);
  });

  it("a status write that keeps a key alive longer is a grant: refused past the writer's own expiry", async () => {
    await key('erin-idle', { user: 'erin', ttl: 1, ttlAfterLastActivity: true });
    const revive = { status: { lastActivity: '2099-01-01T00:00:00Z' } };
    const res = await call('PATCH', '/ownedaccesskeys/erin-idle/status', value('carol'), revive, merge);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('must expire no later');
    // An administrator without an expiry holds what the key holds, for as long: allowed.
    expect((await call('PATCH', '/ownedaccesskeys/erin-idle/status', undefined, revive, merge)).status).toBe(200);
  });

  it("an access rule granting update on a team grants its keys too: a key scoped to teams alone may not add one", async () => {
    // The long property run's counterexample: u1 owns t2, and its key is scoped to teams only.
    for (const name of ['t1', 't2']) expect((await create(server, 'teams', { metadata: { name }, spec: { owner: { user: 'u1' } } })).status).toBe(201);
    await key('t1-ci', { team: 't1' });
    await key('t2-ci', { team: 't2' });
    await key('u1-teams-only', { user: 'u1', scope: { rules: [{ verbs: ['*'], resources: [{ group: 'management.service', resources: ['teams'] }] }] } });
    const rule = { spec: { access: [{ name: 't1-edits', verbs: ['get', 'update', 'patch'], teams: ['t1'] }] } };
    const res = await call('PATCH', '/teams/t2', value('u1-teams-only'), rule, merge);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('the access keys of team "t2"');
    expect((await call('GET', '/ownedaccesskeys/t2-ci', value('t1-ci'))).status).toBe(403);
    // An unscoped key of the owner holds the keys too, and may.
    await key('u1', { user: 'u1' });
    expect((await call('PATCH', '/teams/t2', value('u1'), rule, merge)).status).toBe(200);
    expect((await call('GET', '/ownedaccesskeys/t2-ci', value('t1-ci'))).status).toBe(200);
  });

  it('moving a key to a team hands it to the team\'s managers: a key scoped to patch alone may not move itself', async () => {
    // The long property run's second counterexample: u1 manages t4's keys (through t3), u3's key is scoped to patch.
    expect((await create(server, 'teams', { metadata: { name: 't3' }, spec: { users: ['u1', 'u3'] } })).status).toBe(201);
    expect((await create(server, 'teams', { metadata: { name: 't4' }, spec: { owner: { team: 't3' } } })).status).toBe(201);
    await key('u3-patch-only', { user: 'u3', scope: { rules: [{ verbs: ['patch'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys'] }] }] } });
    await key('u1-cli', { user: 'u1', scope: { roles: [{ role: 'cli' }] } });
    const move = { spec: { team: 't4', user: null } };
    const res = await call('PATCH', '/ownedaccesskeys/u3-patch-only', value('u3-patch-only'), move, merge);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('moving a key to another user or team hands it to whoever manages them');
    expect((await call('GET', '/ownedaccesskeys/u3-patch-only', value('u1-cli'))).status).toBe(403);
    // Unscoped, u3 holds every verb on its own key (and what t4 grants): it may.
    await key('u3', { user: 'u3' });
    expect((await call('PATCH', '/ownedaccesskeys/u3-patch-only', value('u3'), move, merge)).status).toBe(200);
  });

  it("a server-side apply that would create is a create: a key scoped to patch may not create that way", async () => {
    const apply = { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'via-apply' } };
    expect((await call('POST', '/teams', value('bob-patch-only'), { metadata: { name: 'via-post' } })).status).toBe(403);
    const res = await call('PATCH', '/teams/via-apply', value('bob-patch-only'), apply, 'application/apply-patch+yaml');
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('scope');
    expect((await call('GET', '/teams/via-apply', undefined)).status).toBe(404);
  });
});
