/**
 * The garbage collector's stop: it waits for the pass in flight, so no write of the collector lands
 * after it; a pass still reading when stopped ends there and acts on nothing (a full pass over a
 * million team keys takes seconds, and a stop does not wait for the rest of it).
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { GarbageCollector } from '../../src/registry/garbage-collector.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import type { ScanFilter, StoredObject } from '../../src/store/types.js';
import { eventually } from '../support/eventually.js';
import { newRegistry, team } from './helpers.js';

/** A store whose scans (the collector's full pass reads by scan) wait while `held` is set. */
class HeldStore extends MemoryStore {
  held: Promise<void> | undefined;
  scans = 0;
  override async *scan<T extends StoredObject>(prefix: string, mightMatch: ScanFilter, pageSize?: number): AsyncGenerator<T> {
    this.scans++;
    await this.held;
    yield* super.scan<T>(prefix, mightMatch, pageSize);
  }
}

describe('garbage collector stop', () => {
  it('a pass reading when stop is asked ends before stop resolves, acting on nothing, and nothing is written after', async () => {
    const store = new HeldStore();
    const { registry } = newRegistry({ store });
    const { object: owner } = await registry.teams.create(team('owner'));
    await registry.ownedaccesskeys.create({ metadata: { name: 'dangling', ownerReferences: [{ apiVersion: 'management.service/v1', kind: 'Team', name: 'owner', uid: owner.metadata.uid! }] }, spec: { user: 'u' } });
    await registry.teams.delete('owner');
    let release!: () => void;
    store.held = new Promise((r) => (release = r));
    const gc = new GarbageCollector(registry, pino({ level: 'silent' }), { debounceMs: 1 });
    await gc.start();
    await eventually('the first pass is reading', () => store.scans > 0);
    const events: string[] = [];
    const stopped = Promise.resolve(gc.stop()).then(() => events.push('stopped'));
    await new Promise((r) => setTimeout(r, 50));
    events.push('pass released');
    release();
    await stopped;
    // Stopped while reading, the pass acted on nothing: the dangling key is still there...
    const key = await registry.ownedaccesskeys.get('dangling').catch(() => undefined);
    events.push(key ? 'key still there' : 'key collected');
    // ...and stays there: no write of the collector lands after its stop.
    await new Promise((r) => setTimeout(r, 100));
    const later = await registry.ownedaccesskeys.get('dangling').catch(() => undefined);
    events.push(later ? 'key still there' : 'key collected');
    expect(events).toEqual(['pass released', 'stopped', 'key still there', 'key still there']);
  });

  it('a stop while the pass deletes ends it after the delete in flight: the rest waits for the next start', async () => {
    const { registry } = newRegistry({ store: new HeldStore() });
    const { object: owner } = await registry.teams.create(team('owner'));
    const ref = { apiVersion: 'management.service/v1', kind: 'Team', name: 'owner', uid: owner.metadata.uid! };
    for (let i = 0; i < 5; i++) await registry.ownedaccesskeys.create({ metadata: { name: `dangling-${i}`, ownerReferences: [ref] }, spec: { user: 'u' } });
    await registry.teams.delete('owner');
    const gc = new GarbageCollector(registry, pino({ level: 'silent' }));
    // The first delete asks the collector to stop (the lease lost mid-pass), then goes through.
    const remove = registry.ownedaccesskeys.delete.bind(registry.ownedaccesskeys);
    let stopping: Promise<void> | undefined;
    registry.ownedaccesskeys.delete = (name, opts) => {
      stopping ??= gc.stop();
      return remove(name, opts);
    };
    const report = await gc.pass();
    await stopping;
    expect(report.deleted).toEqual(['OwnedAccessKey/dangling-0']);
    const left = (await registry.ownedaccesskeys.list()).items.map((k) => k.metadata.name);
    expect(left).toEqual(['dangling-1', 'dangling-2', 'dangling-3', 'dangling-4']);
  });
});
