import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { causeFields, newRegistry, statusOf, team } from './helpers.js';

async function withTeam(spec: Record<string, unknown> = { users: ['ana'] }, metadata: Record<string, unknown> = {}) {
  const fx = newRegistry();
  const { object } = await fx.registry.teams.create(team('platform', spec, metadata));
  return { ...fx, created: object };
}

const edit = (obj: KubeObject, change: (o: KubeObject) => void): KubeObject => {
  const copy = structuredClone(obj);
  change(copy);
  return copy;
};

describe('update (PUT)', () => {
  it('writes the new object, bumps resourceVersion, and bumps generation only for spec changes', async () => {
    const { registry, created } = await withTeam();
    const specChange = await registry.teams.update('platform', edit(created, (o) => ((o.spec as { users: string[] }).users = ['ana', 'bo'])));
    expect(Number(specChange.object.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    expect(specChange.object.metadata.generation).toBe(2);
    const labelChange = await registry.teams.update('platform', edit(specChange.object, (o) => (o.metadata.labels = { tier: 'gold' })));
    expect(labelChange.object.metadata.generation).toBe(2);
    expect(labelChange.object.metadata.labels).toEqual({ tier: 'gold' });
    expect(await registry.teams.get('platform')).toEqual(labelChange.object);
  });

  it('a PUT that changes nothing keeps the resourceVersion and writes nothing', async () => {
    const { registry, store, created } = await withTeam();
    const revision = await store.currentRevision();
    const { object } = await registry.teams.update('platform', created);
    expect(object.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(await store.currentRevision()).toBe(revision);
  });

  it('requires metadata.resourceVersion (422, as kube answers for custom resources)', async () => {
    const { registry, created } = await withTeam();
    const s = await statusOf(registry.teams.update('platform', edit(created, (o) => delete o.metadata.resourceVersion)));
    expect(s).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: 'Team.management.service "platform" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    });
    expect(causeFields(s)).toEqual(['metadata.resourceVersion']);
  });

  it('answers 409 Conflict for a stale resourceVersion', async () => {
    const { registry, created } = await withTeam();
    await registry.teams.update('platform', edit(created, (o) => (o.spec = { users: ['new'] })));
    const s = await statusOf(registry.teams.update('platform', edit(created, (o) => (o.spec = { users: ['stale'] }))));
    expect(s).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on teams.management.service "platform": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'platform', group: 'management.service', kind: 'teams' },
    });
    expect((await registry.teams.get('platform')).spec).toEqual({ users: ['new'] });
  });

  it('answers 409 when the body names another uid (the object was replaced)', async () => {
    const { registry, created } = await withTeam();
    const s = await statusOf(registry.teams.update('platform', edit(created, (o) => (o.metadata.uid = 'someone-else'))));
    expect(s.code).toBe(409);
    expect(s.message).toBe(
      `Operation cannot be fulfilled on teams.management.service "platform": Precondition failed: UID in precondition: someone-else, UID in object meta: ${created.metadata.uid}`,
    );
  });

  it('answers 400 when the body names another object than the URL', async () => {
    const { registry, created } = await withTeam();
    const s = await statusOf(registry.teams.update('platform', edit(created, (o) => (o.metadata.name = 'other'))));
    expect(s).toMatchObject({ code: 400, message: 'the name of the object (other) does not match the name on the URL (platform)' });
  });

  it('answers 404 for a missing object', async () => {
    const { registry, created } = await withTeam();
    const s = await statusOf(registry.teams.update('ghost', edit(created, (o) => (o.metadata.name = 'ghost'))));
    expect(s).toMatchObject({ code: 404, reason: 'NotFound', message: 'teams.management.service "ghost" not found' });
  });

  it('keeps server-owned metadata whatever the body says', async () => {
    const { registry, created } = await withTeam();
    const { object } = await registry.teams.update(
      'platform',
      edit(created, (o) => {
        o.metadata.creationTimestamp = '1999-01-01T00:00:00Z';
        o.metadata.generation = 40;
        o.metadata.namespace = 'ns';
      }),
    );
    expect(object.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);
    expect(object.metadata.generation).toBe(1);
    expect(object.metadata.namespace).toBeUndefined();
  });

  it('refuses to start a deletion: a deletionTimestamp set by an update is 422 field is immutable (kube)', async () => {
    const { registry, created } = await withTeam();
    const err = await statusOf(registry.teams.update('platform', edit(created, (o) => void (o.metadata.deletionTimestamp = '1999-01-01T00:00:00Z'))));
    expect(err).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(err.message).toContain('metadata.deletionTimestamp: Invalid value: "1999-01-01T00:00:00Z": field is immutable');
    expect((await registry.teams.get('platform')).metadata.deletionTimestamp).toBeUndefined();
  });

  it('ignores status on the main resource and writes only status through the status subresource', async () => {
    const { registry, created } = await withTeam();
    const main = await registry.ownedaccesskeys.create({ metadata: { name: 'k' }, spec: { user: 'ana' }, status: { lastActivity: '2026-01-01T00:00:00Z' } });
    expect(main.object.status).toBeUndefined();
    const withStatus = edit(main.object, (o) => {
      o.status = { lastActivity: '2026-02-02T00:00:00Z' };
      o.spec = { user: 'changed-through-status' };
    });
    const { object } = await registry.ownedaccesskeys.update('k', withStatus, { subresource: 'status' });
    expect(object.status).toEqual({ lastActivity: '2026-02-02T00:00:00Z' });
    expect(object.spec).toEqual({ user: 'ana' });
    expect(object.metadata.generation).toBe(1);
    const again = await registry.ownedaccesskeys.update('k', edit(object, (o) => (o.status = {})));
    expect(again.object.status).toEqual({ lastActivity: '2026-02-02T00:00:00Z' });
    expect(created.status).toBeUndefined();
  });

  it('dryRun=All answers the updated object and stores nothing', async () => {
    const { registry, created } = await withTeam();
    const { object } = await registry.teams.update('platform', edit(created, (o) => (o.spec = { users: ['dry'] })), { dryRun: true });
    expect(object.spec).toEqual({ users: ['dry'] });
    expect(await registry.teams.get('platform')).toEqual(created);
  });

  it('keeps annotations a PUT carries back, and validates the new object', async () => {
    const { registry, created } = await withTeam({}, { annotations: { 'example.com/owner': 'infra' } });
    const { object } = await registry.teams.update('platform', edit(created, (o) => (o.spec = { displayName: 'P' })));
    expect(object.metadata.annotations).toEqual({ 'example.com/owner': 'infra' });
    const s = await statusOf(registry.teams.update('platform', edit(object, (o) => (o.spec = { users: [1] }))));
    expect(causeFields(s)).toEqual(['spec.users[0]']);
  });
});

describe('patch', () => {
  it('JSON patch adds an annotation, as the API document shows', async () => {
    const { registry } = await withTeam({}, { annotations: { a: '1' } });
    const { object } = await registry.teams.patch('platform', 'json', [
      { op: 'add', path: '/metadata/annotations/example.com~1reviewed', value: 'yes' },
    ]);
    expect(object.metadata.annotations).toEqual({ a: '1', 'example.com/reviewed': 'yes' });
  });

  it('JSON patch: a failed test is 422, a path that does not exist is 422, a missing object is 404', async () => {
    const { registry } = await withTeam();
    const failed = await statusOf(registry.teams.patch('platform', 'json', [{ op: 'test', path: '/spec/users/0', value: 'bo' }]));
    // kube-apiserver's generic answer: the failed operation is not named, and the details are empty.
    expect(failed).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request', details: {} });
    const noPath = await statusOf(registry.teams.patch('platform', 'json', [{ op: 'replace', path: '/spec/owner/user', value: 'x' }]));
    expect(noPath.code).toBe(422);
    expect((await statusOf(registry.teams.patch('ghost', 'json', []))).code).toBe(404);
  });

  it('JSON patch: a body that is not a list of operations is 400, and more than 10,000 operations is 413', async () => {
    const { registry } = await withTeam();
    expect(await statusOf(registry.teams.patch('platform', 'json', { op: 'add' }))).toMatchObject({ code: 400, reason: 'BadRequest' });
    const many = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/kind', value: 'Team' }));
    expect(await statusOf(registry.teams.patch('platform', 'json', many))).toMatchObject({ code: 413, reason: 'RequestEntityTooLarge' });
    const bogusOp = await statusOf(registry.teams.patch('platform', 'json', [{ op: 'frobnicate', path: '/spec' }]));
    expect(bogusOp.code).toBe(422);
  });

  it('a resourceVersion in a patch is a precondition', async () => {
    const { registry, created } = await withTeam();
    const rv = created.metadata.resourceVersion!;
    const ok = await registry.teams.patch('platform', 'json', [
      { op: 'test', path: '/metadata/resourceVersion', value: rv },
      { op: 'add', path: '/spec/users/-', value: 'bo' },
    ]);
    expect(ok.object.spec).toEqual({ users: ['ana', 'bo'] });
    const stale = await statusOf(registry.teams.patch('platform', 'merge', { metadata: { resourceVersion: rv }, spec: { users: [] } }));
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict' });
    const staleTest = await statusOf(
      registry.teams.patch('platform', 'json', [{ op: 'test', path: '/metadata/resourceVersion', value: rv }]),
    );
    expect(staleTest.code).toBe(422);
  });

  it('merge patch sets and removes fields (null deletes)', async () => {
    const { registry } = await withTeam({ users: ['ana'], displayName: 'Old' });
    const { object } = await registry.teams.patch('platform', 'merge', { spec: { displayName: null, description: 'new' } });
    expect(object.spec).toEqual({ users: ['ana'], description: 'new' });
    expect(object.metadata.generation).toBe(2);
    expect(await statusOf(registry.teams.patch('platform', 'merge', ['x']))).toMatchObject({ code: 400 });
  });

  it('a patch that makes the object invalid is 422 with the field, and nothing changes', async () => {
    const { registry, created } = await withTeam();
    const s = await statusOf(registry.teams.patch('platform', 'merge', { spec: { clusterRoles: [{ name: 'a' }, { name: 'a' }] } }));
    expect(causeFields(s)).toEqual(['spec.clusterRoles[1]']);
    expect(await registry.teams.get('platform')).toEqual(created);
  });

  it('a patch cannot rename the object or change its uid', async () => {
    const { registry } = await withTeam();
    const rename = await statusOf(registry.teams.patch('platform', 'merge', { metadata: { name: 'other' } }));
    expect(rename.code).toBe(422);
    expect(causeFields(rename)).toContain('metadata.name');
    expect(rename.message).toContain('field is immutable');
    const uid = await statusOf(registry.teams.patch('platform', 'merge', { metadata: { uid: 'x' } }));
    expect(causeFields(uid)).toContain('metadata.uid');
  });

  it('unknown fields in a patch follow fieldValidation', async () => {
    const { registry } = await withTeam();
    const warned = await registry.teams.patch('platform', 'merge', { spec: { colour: 'red' } });
    expect(warned.warnings).toEqual(['unknown field "spec.colour"']);
    expect(warned.object.spec).toEqual({ users: ['ana'] });
    const strict = await statusOf(registry.teams.patch('platform', 'merge', { spec: { colour: 'red' } }, { fieldValidation: 'Strict' }));
    expect(strict).toMatchObject({ code: 400, message: 'strict decoding error: unknown field "spec.colour"' });
  });

  it('concurrent patches without preconditions all land', async () => {
    const { registry } = await withTeam({ users: [] });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => registry.teams.patch('platform', 'json', [{ op: 'add', path: '/spec/users/-', value: `u${i}` }])),
    );
    expect(((await registry.teams.get('platform')).spec as { users: string[] }).users).toHaveLength(20);
  });
});
