/**
 * The escalation paths of issue 13, each tried over HTTP against the real server: a narrowed key
 * making a wider one, membership that confers ownership elsewhere, team keys without (or outliving)
 * their team, and keys being deleted. Each is refused, with a message naming what was missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create } from './fixture.js';
import { eventually } from '../support/eventually.js';

const merge = 'application/merge-patch+json';
const value = (name: string) => `Value${name.replace(/[^A-Za-z0-9]/g, '')}${'q'.repeat(40)}`;

describe('no escalation: each path of issue 13 over HTTP', () => {
  let server: InProcess;
  const call = async (method: string, path: string, token: string | undefined, body?: unknown, type = 'application/json') => {
    const res = await server.fetch(`${server.api}${path}`, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'Content-Type': type } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as { message?: string; reason?: string; metadata?: { ownerReferences?: { uid: string }[] } } };
  };
  const key = async (name: string, spec: Record<string, unknown>, token?: string) => {
    const res = await create(server, 'ownedaccesskeys', { metadata: { name }, spec: { ...spec, key: value(name) } }, token);
    return { status: res.status, body: (await res.json()) as { message?: string; reason?: string; details?: { causes?: { field: string; message: string }[] } } };
  };

  beforeAll(async () => {
    server = await startInProcess();
    for (const [name, spec] of Object.entries({
      platform: { users: ['ana'], clusterRoles: [{ name: 'teams-admin' }] },
      auditors: { users: ['aud'], access: [{ name: 'mallory-edits', verbs: ['get', 'update', 'patch'], users: ['mallory'] }] },
      payments: { owner: { team: 'auditors' } },
    })) expect((await create(server, 'teams', { metadata: { name }, spec })).status).toBe(201);
    for (const [name, spec] of Object.entries({ ana: { user: 'ana' }, mallory: { user: 'mallory' }, 'ana-narrow': { user: 'ana', ttl: 3600, scope: { rules: [{ verbs: ['create'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys'] }] }] } } })) {
      expect((await key(name, spec)).status).toBe(201);
    }
  });
  afterAll(() => server.close());

  it('1. a narrowed key makes only keys as narrow: scope within its own, expiry no later', async () => {
    const narrow = value('ana-narrow');
    const scope = { rules: [{ verbs: ['create'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys'] }] }] };
    const wide = await key('from-narrow', { user: 'ana' }, narrow);
    expect(wide.status).toBe(403);
    expect(wide.body.message).toContain("a key made or widened by a scoped key needs a scope within that key's scope");
    const forever = await key('from-narrow', { user: 'ana', scope }, narrow);
    expect(forever.status).toBe(403);
    expect(forever.body.message).toContain('a key made or widened by a key that expires must expire no later');
    expect((await key('from-narrow', { user: 'ana', scope, ttl: 600 }, narrow)).status).toBe(201);
    // Nor may a key shed its own narrowing (an unscoped key of the same user may: it holds more).
    const ana = value('ana');
    for (const patch of [{ spec: { scope: null } }, { spec: { ttl: null } }]) {
      const res = await call('PATCH', '/ownedaccesskeys/ana-narrow', narrow, patch, merge);
      expect(res.status).toBe(403);
    }
    expect((await call('PATCH', '/ownedaccesskeys/from-narrow', ana, { spec: { ttl: null } }, merge)).status).toBe(200);
  });

  it('re-enabling a disabled key is judged as setting a key: a narrowed key may not re-enable a wider one', async () => {
    const rules = { rules: [{ verbs: ['get', 'patch'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys'] }] }] };
    expect((await key('ana-patcher', { user: 'ana', ttl: 3600, scope: rules })).status).toBe(201);
    expect((await key('ana-dormant', { user: 'ana', disabled: true })).status).toBe(201);
    const patcher = value('ana-patcher');
    // A change that gives the key nothing is no escalation: the narrowed key may make it.
    expect((await call('PATCH', '/ownedaccesskeys/ana-dormant', patcher, { metadata: { labels: { note: 'x' } } }, merge)).status).toBe(200);
    const enabled = await call('PATCH', '/ownedaccesskeys/ana-dormant', patcher, { spec: { disabled: false } }, merge);
    expect(enabled.status).toBe(403);
    expect(enabled.body.message).toContain("a key made or widened by a scoped key needs a scope within that key's scope");
    // Ana's unscoped key holds all the key holds: she may.
    expect((await call('PATCH', '/ownedaccesskeys/ana-dormant', value('ana'), { spec: { disabled: false } }, merge)).status).toBe(200);
  });

  it('2. membership confers ownership: an access rule on auditors does not let mallory join it and delete payments', async () => {
    const mallory = value('mallory');
    expect((await call('DELETE', '/teams/payments?dryRun=All', mallory)).status).toBe(403);
    const join = await call('PATCH', '/teams/auditors', mallory, { spec: { users: ['aud', 'mallory'] } }, merge);
    expect(join.status).toBe(403);
    // She may not read payments, so the refusal says what is missing without naming it (issue 24, point 5).
    expect(join.body.message).toContain('adding members to team "auditors" would grant them rights on teams you may not read, which you do not hold');
    expect(join.body.message).not.toContain('payments');
    expect((await call('DELETE', '/teams/payments?dryRun=All', mallory)).status).toBe(403);
    // What she holds she may still use: edits that grant nothing.
    expect((await call('PATCH', '/teams/auditors', mallory, { spec: { description: 'reviewed' } }, merge)).status).toBe(200);
  });

  it('3. a team key needs its team (422) and dies with it: a team re-created under its name does not revive it', async () => {
    const missing = await key('early', { team: 'future' });
    expect(missing.status).toBe(422);
    expect(missing.body.details?.causes).toEqual([{ reason: 'FieldValueInvalid', field: 'spec.team', message: 'Invalid value: "future": team "future" does not exist' }]);
    expect((await create(server, 'teams', { metadata: { name: 'ephemeral' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
    const team = (await call('GET', '/teams/ephemeral', undefined)).body as { metadata: { uid: string } };
    expect((await key('ephemeral-key', { team: 'ephemeral' })).status).toBe(201);
    const bound = await call('GET', '/ownedaccesskeys/ephemeral-key', undefined);
    expect(bound.body.metadata?.ownerReferences).toEqual([{ apiVersion: 'management.service/v1', kind: 'Team', name: 'ephemeral', uid: team.metadata.uid }]);
    const token = value('ephemeral-key');
    expect((await call('GET', '/teams/platform', token)).status).toBe(200); // teams-viewer
    // A key left over for any reason (restored from a backup, its collection not yet run) whose
    // team was re-created under the same name: the uid differs, so it fails closed. (A server
    // without a garbage collector, so the leftover stays put while it is tried.)
    const noGc = await startInProcess({ garbageCollector: false });
    try {
      expect((await create(noGc, 'teams', { metadata: { name: 'ephemeral' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
      expect((await create(noGc, 'ownedaccesskeys', { metadata: { name: 'leftover' }, spec: { team: 'ephemeral', key: value('leftover') } })).status).toBe(201);
      const use = () => noGc.fetch(`${noGc.api}/teams/ephemeral`, { headers: { Authorization: `Bearer ${value('leftover')}` } });
      expect((await use()).status).toBe(200);
      expect((await noGc.fetch(`${noGc.api}/teams/ephemeral`, { method: 'DELETE' })).status).toBe(200);
      expect((await create(noGc, 'teams', { metadata: { name: 'ephemeral' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
      const revived = await use();
      expect(revived.status).toBe(401);
      expect(((await revived.json()) as { message: string }).message).toBe("access key's team no longer exists");
    } finally {
      await noGc.close();
    }
    // Deleting the team collects its key; even Orphan deletion does not keep a team key (it is bound
    // to its team), and a team re-created under the name starts with no keys.
    expect((await call('DELETE', '/teams/ephemeral', undefined)).status).toBe(200);
    await eventually('the ephemeral key is collected', async () => (await call('GET', '/ownedaccesskeys/ephemeral-key', undefined)).status === 404);
    expect((await create(server, 'teams', { metadata: { name: 'ephemeral' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
    expect((await key('second-key', { team: 'ephemeral' })).status).toBe(201);
    expect((await call('DELETE', '/teams/ephemeral?propagationPolicy=Orphan', undefined)).status).toBe(200);
    await eventually('the second key is collected', async () => (await call('GET', '/ownedaccesskeys/second-key', undefined)).status === 404);
    expect((await create(server, 'teams', { metadata: { name: 'ephemeral' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
    const keys = await server.fetch(`${server.api}/teams/ephemeral/accesskeys`);
    expect(((await keys.json()) as { accessKeys: unknown[] }).accessKeys).toEqual([]);
    expect((await call('GET', '/teams/platform', value('second-key'))).status).toBe(401);
  });

  it('4. a key being deleted (held by a finalizer) no longer authenticates', async () => {
    expect((await key('held', { user: 'ana' })).status).toBe(201);
    expect((await call('PATCH', '/ownedaccesskeys/held', undefined, { metadata: { finalizers: ['example.com/hold'] } }, merge)).status).toBe(200);
    expect((await call('GET', '/teams/platform', value('held'))).status).toBe(200);
    expect((await call('DELETE', '/ownedaccesskeys/held', undefined)).status).toBe(200);
    const res = await call('GET', '/teams/platform', value('held'));
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ reason: 'Unauthorized', message: 'access key is being deleted' });
  });

  it('rotating a team key is taking what the key holds: only for those who hold it', async () => {
    // mallory may update auditors (her access rule), so she manages its keys, but she does not hold
    // what membership in auditors gives (ownership of payments): she may not set a key's value.
    expect((await key('auditors-ci', { team: 'auditors' })).status).toBe(201);
    const rotate = await call('PATCH', '/ownedaccesskeys/auditors-ci', value('mallory'), { spec: { key: value('stolen') } }, merge);
    expect(rotate.status).toBe(403);
    expect(rotate.body.message).toContain('the key would hold');
    expect((await call('PATCH', '/ownedaccesskeys/auditors-ci', value('mallory'), { spec: { description: 'ci' } }, merge)).status).toBe(200);
  });
});
