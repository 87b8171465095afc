import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { GarbageCollector } from '../../src/registry/garbage-collector.js';
import { newRegistry, statusOf, team } from './helpers.js';

async function ownedKey() {
  const fx = newRegistry();
  const { object: owner } = await fx.registry.teams.create(team('owner'));
  const ref = (block: boolean) => ({ apiVersion: 'management.service/v1', kind: 'Team', name: 'owner', uid: owner.metadata.uid!, blockOwnerDeletion: block });
  // User keys: a team key's binding to its team is the server's (test/auth/team-keys.test.ts).
  const key = (name: string, block: boolean, finalizers?: string[]) =>
    fx.registry.ownedaccesskeys.create({ metadata: { name, ownerReferences: [ref(block)], ...(finalizers ? { finalizers } : {}) }, spec: { user: 'u' } });
  const gc = new GarbageCollector(fx.registry, pino({ level: 'silent' }));
  const exists = async (plural: 'teams' | 'ownedaccesskeys', name: string): Promise<KubeObject | undefined> =>
    fx.registry[plural].get(name).catch(() => undefined);
  return { ...fx, owner, key, gc, exists };
}

describe('garbage collection and propagation policies', () => {
  it('Background: the owner goes at once, its dependents on the next pass', async () => {
    const { registry, key, gc, exists } = await ownedKey();
    await key('k1', false);
    const { removed } = await registry.teams.delete('owner');
    expect(removed).toBe(true);
    expect(await exists('ownedaccesskeys', 'k1')).toBeDefined();
    expect((await gc.pass()).deleted).toEqual(['OwnedAccessKey/k1']);
    expect(await exists('ownedaccesskeys', 'k1')).toBeUndefined();
  });

  it('Foreground: the owner waits, terminating, until no dependent blocks it', async () => {
    const { registry, key, gc, exists } = await ownedKey();
    await key('blocker', true, ['example.com/hold']);
    await key('free', false);
    const { object, removed } = await registry.teams.delete('owner', { propagationPolicy: 'Foreground' });
    expect(removed).toBe(false);
    expect(object.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(object.metadata.deletionTimestamp).toBeDefined();
    await gc.pass();
    // Both dependents are being deleted; the blocker is held by its own finalizer, so the owner waits.
    expect(await exists('ownedaccesskeys', 'free')).toBeUndefined();
    expect((await exists('ownedaccesskeys', 'blocker'))?.metadata.deletionTimestamp).toBeDefined();
    expect(await exists('teams', 'owner')).toBeDefined();
    await registry.ownedaccesskeys.patch('blocker', 'merge', { metadata: { finalizers: null } });
    expect(await exists('ownedaccesskeys', 'blocker')).toBeUndefined();
    expect((await gc.pass()).released).toEqual(['Team/owner']);
    expect(await exists('teams', 'owner')).toBeUndefined();
  });

  it('Orphan: dependents keep living without the reference, and the owner goes', async () => {
    const { registry, key, gc, exists } = await ownedKey();
    await key('k1', true);
    const { object } = await registry.teams.delete('owner', { propagationPolicy: 'Orphan' });
    expect(object.metadata.finalizers).toEqual(['orphan']);
    const report = await gc.pass();
    expect(report.orphaned).toEqual(['OwnedAccessKey/k1']);
    expect(report.released).toEqual(['Team/owner']);
    expect(await exists('teams', 'owner')).toBeUndefined();
    const kept = await exists('ownedaccesskeys', 'k1');
    expect(kept).toBeDefined();
    expect(kept!.metadata.ownerReferences).toBeUndefined();
    expect((await gc.pass()).deleted).toEqual([]);
  });

  it('leaves objects whose owners it cannot check (other kinds), and those with a living owner', async () => {
    const { registry, gc, exists } = await ownedKey();
    await registry.ownedaccesskeys.create({
      metadata: { name: 'foreign', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'x' }] },
      spec: { user: 'u' },
    });
    await registry.ownedaccesskeys.create({
      metadata: { name: 'dangling', ownerReferences: [{ apiVersion: 'management.service/v1', kind: 'Team', name: 'gone', uid: 'no-such-uid' }] },
      spec: { user: 'u' },
    });
    expect((await gc.pass()).deleted).toEqual(['OwnedAccessKey/dangling']);
    expect(await exists('ownedaccesskeys', 'foreign')).toBeDefined();
  });

  it('an owner is matched by kind, name and uid together: a reference naming one object with the uid of another holds nothing', async () => {
    const { registry, owner, gc, exists } = await ownedKey();
    await registry.ownedaccesskeys.create({ metadata: { name: 'named' }, spec: { user: 'u' } });
    // Written past admission (which refuses it, issue 24 point 2): the collector must not act on it either.
    await registry.ownedaccesskeys.create({
      metadata: {
        name: 'impostor',
        finalizers: ['example.com/hold'],
        ownerReferences: [{ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', name: 'named', uid: owner.metadata.uid!, blockOwnerDeletion: true }],
      },
      spec: { user: 'u' },
    });
    await registry.teams.delete('owner', { propagationPolicy: 'Foreground' });
    const report = await gc.pass();
    expect(report.released).toEqual(['Team/owner']);
    expect(await exists('teams', 'owner')).toBeUndefined();
    // Its reference names no live object (key "named" has another uid): dangling, so it is collected itself.
    expect(report.deleted).toEqual(['OwnedAccessKey/impostor']);
  });

  it('Foreground: a dependent another live owner keeps loses the reference, not its life', async () => {
    const { registry, owner, gc, exists } = await ownedKey();
    const { object: other } = await registry.teams.create(team('other'));
    const refTo = (o: typeof owner) => ({ apiVersion: 'management.service/v1', kind: 'Team', name: o.metadata.name!, uid: o.metadata.uid! });
    await registry.ownedaccesskeys.create({ metadata: { name: 'shared', ownerReferences: [refTo(owner), refTo(other)] }, spec: { user: 'u' } });
    await registry.teams.delete('owner', { propagationPolicy: 'Foreground' });
    expect((await gc.pass()).orphaned).toEqual(['OwnedAccessKey/shared']);
    await gc.pass();
    expect(await exists('teams', 'owner')).toBeUndefined();
    expect((await exists('ownedaccesskeys', 'shared'))?.metadata.ownerReferences).toEqual([refTo(other)]);
  });

  it('Background: an object with two owners survives the deletion of one and is collected only after the last', async () => {
    const { registry, owner, gc, exists } = await ownedKey();
    const { object: other } = await registry.teams.create(team('other'));
    const refTo = (o: typeof owner) => ({ apiVersion: 'management.service/v1', kind: 'Team', name: o.metadata.name!, uid: o.metadata.uid! });
    await registry.ownedaccesskeys.create({ metadata: { name: 'shared', ownerReferences: [refTo(owner), refTo(other)] }, spec: { user: 'u' } });
    await registry.teams.delete('owner');
    expect((await gc.pass()).deleted).toEqual([]);
    expect((await exists('ownedaccesskeys', 'shared'))?.metadata.ownerReferences).toEqual([refTo(owner), refTo(other)]);
    await registry.teams.delete('other');
    expect((await gc.pass()).deleted).toEqual(['OwnedAccessKey/shared']);
    expect(await exists('ownedaccesskeys', 'shared')).toBeUndefined();
  });

  it('finalizers are only removable while deleting, and the last one removes the object', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('t', {}, { finalizers: ['example.com/a'] }));
    await registry.teams.delete('t');
    expect((await statusOf(registry.teams.patch('t', 'json', [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/b' }]))).code).toBe(422);
    await registry.teams.patch('t', 'json', [{ op: 'remove', path: '/metadata/finalizers/0' }]);
    expect((await statusOf(registry.teams.get('t'))).code).toBe(404);
  });
});
