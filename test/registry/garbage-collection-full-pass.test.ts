/**
 * A full pass (the first after start, after a gap in the watch, after a failed pass) reads every
 * object with an owner, but holds only those that can need action: with thousands of team keys of
 * live Teams, it keeps the few objects it acts on, and acts on them as it always did. A stop
 * ends it at once.
 */
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, OwnerReference } from '../../src/api/types.js';
import { GarbageCollector, type CollectionReport } from '../../src/registry/garbage-collector.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { team } from './helpers.js';

const liveTeams = 20;
const keysPerTeam = 100;

const refTo = (o: KubeObject): OwnerReference => ({ apiVersion: 'management.service/v1', kind: o.kind, name: o.metadata.name!, uid: o.metadata.uid! });
const sorted = (r: CollectionReport) => ({ deleted: [...r.deleted].sort(), orphaned: [...r.orphaned].sort(), released: [...r.released].sort() });

describe('a full garbage collection pass over many objects with live owners', () => {
  const store = new CachedStore(new MemoryStore());
  const registry = createRegistry(store);
  const names = async (plural: 'teams' | 'ownedaccesskeys') => (await registry[plural].list()).items.map((o) => o.metadata.name!).sort();

  beforeAll(async () => {
    const teams: KubeObject[] = [];
    for (let t = 0; t < liveTeams; t++) teams.push((await registry.teams.create(team(`live-${t}`))).object);
    const creates: Promise<unknown>[] = [];
    for (let t = 0; t < liveTeams; t++) for (let k = 0; k < keysPerTeam; k++) creates.push(registry.ownedaccesskeys.create({ metadata: { name: `live-${t}-key-${k}` }, spec: { team: `live-${t}` } }));
    await Promise.all(creates);

    // Needs action: a key whose Team was deleted (Background: the Team goes at once, the key stays).
    await registry.teams.create(team('gone'));
    await registry.ownedaccesskeys.create({ metadata: { name: 'gone-key' }, spec: { team: 'gone' } });
    await registry.teams.delete('gone');
    // Needs action: a Team deleted in the foreground, with two keys and a user key a live Team also owns.
    const { object: fg } = await registry.teams.create(team('fg'));
    const fgKeys: KubeObject[] = [];
    for (const k of ['fg-key-0', 'fg-key-1']) fgKeys.push((await registry.ownedaccesskeys.create({ metadata: { name: k }, spec: { team: 'fg' } })).object);
    // A key owned by one of them: the pass deletes its owner, then finds it with no owner left.
    await registry.ownedaccesskeys.create({ metadata: { name: 'fg-grandchild', ownerReferences: [refTo(fgKeys[0]!)] }, spec: { user: 'u' } });
    await registry.ownedaccesskeys.create({ metadata: { name: 'fg-shared', ownerReferences: [refTo(fg), refTo(teams[0]!)] }, spec: { user: 'u' } });
    await registry.teams.delete('fg', { propagationPolicy: 'Foreground' });
    // Needs action: a user key deleted with Orphan, owning another user key.
    const { object: owner } = await registry.ownedaccesskeys.create({ metadata: { name: 'orphan-owner' }, spec: { user: 'u' } });
    await registry.ownedaccesskeys.create({ metadata: { name: 'orphan-dep', ownerReferences: [refTo(owner)] }, spec: { user: 'u' } });
    await registry.ownedaccesskeys.delete('orphan-owner', { propagationPolicy: 'Orphan' });
  });

  it('a stop during the pass does not wait for the rest of it: the stopped pass acts on nothing', async () => {
    const gc = new GarbageCollector(registry, pino({ level: 'silent' }));
    const passing = gc.pass();
    await new Promise((r) => setTimeout(r, 2)); // the pass is reading its 2,000-odd objects
    await gc.stop();
    expect(await passing).toEqual({ deleted: [], orphaned: [], released: [] });
    // Still there for the next test's pass, which removes it: the stopped pass did not get to it.
    expect((await registry.ownedaccesskeys.get('gone-key')).metadata.name).toBe('gone-key');
  });

  it('keeps only the objects needing action, and makes the same deletions, orphanings and releases', async () => {
    const gc = new GarbageCollector(registry, pino({ level: 'silent' }));
    const report = await gc.pass();
    expect(sorted(report)).toEqual({
      deleted: ['OwnedAccessKey/fg-grandchild', 'OwnedAccessKey/fg-key-0', 'OwnedAccessKey/fg-key-1', 'OwnedAccessKey/gone-key'],
      orphaned: ['OwnedAccessKey/fg-shared', 'OwnedAccessKey/orphan-dep'],
      released: ['OwnedAccessKey/orphan-owner', 'Team/fg'],
    });
    // Held: the two owners being deleted, their four dependents and one of theirs, and the key whose
    // Team is gone; not the 2,000 keys of live Teams (the pass before this change held all 2,008).
    expect(gc.lastPass).toEqual({ full: true, kept: 8 });

    // Nothing is left to do, and nothing is held.
    expect(await gc.pass()).toEqual({ deleted: [], orphaned: [], released: [] });
    expect(gc.lastPass).toEqual({ full: true, kept: 0 });
    expect(await names('teams')).toEqual(Array.from({ length: liveTeams }, (_, t) => `live-${t}`).sort());
    const keys = await names('ownedaccesskeys');
    expect(keys.filter((k) => k.startsWith('live-'))).toHaveLength(liveTeams * keysPerTeam);
    expect(keys.filter((k) => !k.startsWith('live-'))).toEqual(['fg-shared', 'orphan-dep']);
    expect((await registry.ownedaccesskeys.get('orphan-dep')).metadata.ownerReferences).toBeUndefined();
    expect((await registry.ownedaccesskeys.get('fg-shared')).metadata.ownerReferences?.map((r) => r.name)).toEqual(['live-0']);
  });
});
