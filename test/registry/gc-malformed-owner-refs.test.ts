/**
 * The API refuses ownerReferences of any other shape, but the store can hold one written past it (a
 * restore, a hand edit). The owner index and the watch cache left such an object out
 * (test/store/cache-malformed.test.ts); the collector's full pass read it as it is, and one such
 * object failed every pass, for good: nothing was collected again (api/owner-references.ts).
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ownerReferencesOf } from '../../src/api/owner-references.js';
import { GarbageCollector } from '../../src/registry/garbage-collector.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { team } from './helpers.js';

const malformed: [string, unknown][] = [
  ['a string', 'team-x'],
  ['a list holding null', [null]],
  ['a reference whose uid is a number', [{ apiVersion: 'management.service/v1', kind: 'Team', name: 'gone', uid: 5 }]],
];

describe('a stored object whose ownerReferences are not a list of references', () => {
  it.each(malformed)('(%s) fails no pass of the collector: the dependents of a deleted owner are still collected, and it is left alone', async (_, refs) => {
    const store = new CachedStore(new MemoryStore());
    const registry = createRegistry(store);
    const { object: gone } = await registry.teams.create(team('gone'));
    await registry.ownedaccesskeys.create({ metadata: { name: 'gone-key', ownerReferences: [{ apiVersion: 'management.service/v1', kind: 'Team', name: 'gone', uid: gone.metadata.uid! }] }, spec: { user: 'ann' } });
    await registry.teams.delete('gone');
    await store.create('/ownedaccesskeys/odd', { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'odd', uid: 'uid-odd', ownerReferences: refs }, spec: { user: 'bob' } } as never);
    const gc = new GarbageCollector(registry, pino({ level: 'silent' }));
    await gc.pass();
    const names = (await registry.ownedaccesskeys.list()).items.map((o) => o.metadata.name);
    expect(names).not.toContain('gone-key');
    expect(names).toContain('odd');
    await store.close();
  });

  it('reads as no owner at all, while a well-formed list reads as it is', () => {
    for (const [, refs] of malformed) expect(ownerReferencesOf({ ownerReferences: refs })).toEqual([]);
    expect(ownerReferencesOf({ ownerReferences: [{ apiVersion: 'v', kind: 'Team', name: 'a', uid: 'u' }, 7] })).toEqual([]);
    const good = [{ apiVersion: 'v', kind: 'Team', name: 'a', uid: 'u', blockOwnerDeletion: true }];
    expect(ownerReferencesOf({ ownerReferences: good })).toBe(good);
    expect(ownerReferencesOf(undefined)).toEqual([]);
  });
});
