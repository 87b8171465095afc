/**
 * While the collector follows every change, a pass after a deletion reads only what the deletion
 * concerns (the owner index), not every object with an owner: with many team keys stored, deleting
 * a Team collects its keys with no walk of the others.
 */
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { GarbageCollector } from '../../src/registry/garbage-collector.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { eventually } from '../support/eventually.js';
import { team } from './helpers.js';

describe('the garbage collector following changes', () => {
  const store = new CachedStore(new MemoryStore());
  const registry = createRegistry(store);
  const gc = new GarbageCollector(registry, pino({ level: 'silent' }), { debounceMs: 5 });
  afterAll(async () => {
    gc.stop();
    await store.close();
  });

  it("collects a deleted Team's keys without reading every owned object again", async () => {
    for (const t of ['gone', 'kept']) await registry.teams.create(team(t));
    for (let i = 0; i < 20; i++) await registry.ownedaccesskeys.create({ metadata: { name: `k${i}` }, spec: { team: i % 2 ? 'gone' : 'kept' } });
    let scans = 0;
    const scan = store.scan.bind(store);
    store.scan = (...args: Parameters<typeof scan>) => {
      scans++;
      return scan(...args);
    };
    await gc.start();
    // The first pass reads every owned object once.
    await eventually('the first pass ran', () => scans > 0);
    await gc.pass();
    const afterFirst = scans;
    await registry.teams.delete('gone');
    await eventually('the deleted team\'s keys are collected', async () => (await registry.ownedaccesskeys.list()).items.every((k) => (k.spec as { team: string }).team === 'kept'));
    expect((await registry.ownedaccesskeys.list()).items.map((k) => k.metadata.name).sort()).toEqual(['k0', 'k10', 'k12', 'k14', 'k16', 'k18', 'k2', 'k4', 'k6', 'k8']);
    expect(scans).toBe(afterFirst);
  });
});
