import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { newRegistry, statusOf, take, team } from './helpers.js';

const finalizer = 'example.com/cleanup';

describe('delete', () => {
  it('removes an object without finalizers at once', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('a', { users: ['x'] }));
    const { object, removed } = await registry.teams.delete('a');
    expect(removed).toBe(true);
    expect(object.spec).toEqual({ users: ['x'] });
    expect((await statusOf(registry.teams.get('a'))).code).toBe(404);
    expect(await statusOf(registry.teams.delete('a'))).toMatchObject({ code: 404, message: 'teams.management.service "a" not found' });
  });

  it('with finalizers: sets deletionTimestamp, bumps generation, blocks removal until the last finalizer goes', async () => {
    const { registry, clock } = newRegistry();
    const { object: created } = await registry.teams.create(team('a', {}, { finalizers: [finalizer, 'example.com/other'] }));
    const watch = registry.teams.watch({ resourceVersion: created.metadata.resourceVersion! });
    const { object, removed } = await registry.teams.delete('a');
    expect(removed).toBe(false);
    expect(object.metadata.deletionTimestamp).toBe(new Date(clock.time).toISOString().replace('.000Z', 'Z'));
    expect(object.metadata.deletionGracePeriodSeconds).toBe(0);
    expect(object.metadata.generation).toBe(2);
    expect((await registry.teams.get('a')).metadata.deletionTimestamp).toBe(object.metadata.deletionTimestamp);

    // While deleting, finalizers can only be removed.
    const added = await statusOf(registry.teams.patch('a', 'json', [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/new' }]));
    expect(added.code).toBe(422);
    expect(added.details?.causes?.[0]).toMatchObject({ field: 'metadata.finalizers', reason: 'FieldValueForbidden' });
    expect(added.message).toContain('no new finalizers can be added if the object is being deleted, found new finalizers ["example.com/new"]');
    // deletionTimestamp cannot be cleared or moved by an update.
    const cleared = await registry.teams.patch('a', 'merge', { metadata: { deletionTimestamp: null, finalizers: [finalizer] } });
    expect(cleared.object.metadata.deletionTimestamp).toBe(object.metadata.deletionTimestamp);

    const last = await registry.teams.patch('a', 'json', [{ op: 'remove', path: '/metadata/finalizers' }]);
    expect(last.object.metadata.finalizers).toBeUndefined();
    expect((await statusOf(registry.teams.get('a'))).code).toBe(404);
    const events = await take(watch, 3);
    expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'DELETED']);
    expect((events[0]!.object as KubeObject).metadata.deletionTimestamp).toBeDefined();
  });

  it('ignores gracePeriodSeconds, as kube does for custom resources: removed at once, or terminating now while finalizers remain', async () => {
    const { registry, clock } = newRegistry();
    for (const [name, grace] of [['a', 30], ['b', 5], ['c', -1]] as const) {
      await registry.teams.create(team(name));
      expect((await registry.teams.delete(name, { gracePeriodSeconds: grace })).removed).toBe(true);
    }
    await registry.teams.create(team('f', {}, { finalizers: [finalizer] }));
    const held = await registry.teams.delete('f', { gracePeriodSeconds: 60 });
    expect(held.removed).toBe(false);
    expect(Date.parse(held.object.metadata.deletionTimestamp!)).toBe(clock.time);
    expect(held.object.metadata.deletionGracePeriodSeconds).toBe(0);
  });

  it('checks uid and resourceVersion preconditions', async () => {
    const { registry } = newRegistry();
    const { object } = await registry.teams.create(team('a'));
    const uid = await statusOf(registry.teams.delete('a', { preconditions: { uid: 'nope' } }));
    expect(uid).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on teams.management.service "a": Precondition failed: UID in precondition: nope, UID in object meta: ${object.metadata.uid}`,
    });
    const rv = await statusOf(registry.teams.delete('a', { preconditions: { resourceVersion: '999' } }));
    expect(rv.message).toContain('Precondition failed: ResourceVersion in precondition: 999');
    const ok = await registry.teams.delete('a', { preconditions: { uid: object.metadata.uid!, resourceVersion: object.metadata.resourceVersion! } });
    expect(ok.removed).toBe(true);
  });

  it('rejects invalid delete options with 422', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('a'));
    const policy = await statusOf(registry.teams.delete('a', { propagationPolicy: 'Sometimes' }));
    expect(policy.details?.causes?.[0]).toMatchObject({ field: 'propagationPolicy', reason: 'FieldValueNotSupported' });
    expect((await registry.teams.get('a')).metadata.name).toBe('a');
  });

  it('dryRun=All answers as if deleted and keeps the object', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('a'));
    expect((await registry.teams.delete('a', { dryRun: true })).removed).toBe(true);
    expect((await registry.teams.get('a')).metadata.name).toBe('a');
  });

  it('deletecollection deletes what the selector matches and returns it', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('a', {}, { labels: { env: 'dev' } }));
    await registry.teams.create(team('b', {}, { labels: { env: 'prod' } }));
    await registry.teams.create(team('c', {}, { labels: { env: 'dev' }, finalizers: [finalizer] }));
    const deleted = await registry.teams.deleteCollection({ labelSelector: 'env=dev' });
    expect(deleted.kind).toBe('TeamList');
    expect(deleted.items.map((i) => i.metadata.name)).toEqual(['a', 'c']);
    expect((await registry.teams.list()).items.map((i) => [i.metadata.name, Boolean(i.metadata.deletionTimestamp)])).toEqual([
      ['b', false],
      ['c', true],
    ]);
  });
});
