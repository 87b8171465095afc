/**
 * Deletes that meet what the plain cases (delete.test.ts) do not: a deadline an older version set
 * in the future, an object changed between the read and the removal (once, or on every attempt),
 * the periodic removal of due objects, and which per-item refusals a deletecollection passes over.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, conflict, notFound, unprocessable } from '../../src/api/errors.js';
import type { KubeObject } from '../../src/api/types.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import type { Preconditions, StoredObject, WriteOptions } from '../../src/store/types.js';
import { newRegistry, statusOf, team } from './helpers.js';

const finalizer = 'example.com/cleanup';
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** A store where another writer changes the object just before each of the next `races` deletes. */
class RacingStore extends MemoryStore {
  races = 0;
  override async delete<T extends StoredObject>(key: string, preconditions?: Preconditions, opts?: WriteOptions<T>): Promise<T> {
    if (this.races > 0) {
      this.races--;
      await super.guaranteedUpdate<T>(key, undefined, (cur) => {
        const meta = (cur as unknown as KubeObject).metadata;
        return { ...cur, metadata: { ...meta, labels: { ...meta.labels, touched: String(Number(meta.labels?.touched ?? 0) + 1) } } };
      });
    }
    return super.delete(key, preconditions, opts);
  }
}

/** A store where, at the next read of `key`, the object is replaced by a namesake (another uid). */
class ReplacingStore extends MemoryStore {
  replaceAt: string | undefined;
  override async get<T extends StoredObject>(key: string): Promise<T> {
    if (key === this.replaceAt) {
      this.replaceAt = undefined;
      const old = await super.get<T>(key);
      await super.delete(key);
      const meta = (old as unknown as KubeObject).metadata;
      await super.create(key, { ...old, metadata: { ...meta, uid: 'namesake', resourceVersion: undefined, labels: { namesake: 'yes' } } });
    }
    return super.get<T>(key);
  }
}

/** An object as an older version left it: deletion requested with a deadline `inSeconds` ahead, no finalizer. */
async function legacyTerminating(store: MemoryStore, now: number, name: string, inSeconds: number, finalizers?: string[]) {
  await store.guaranteedUpdate<StoredObject>(`/teams/${name}`, undefined, (cur) => {
    const meta = (cur as unknown as KubeObject).metadata;
    return { ...cur, metadata: { ...meta, deletionTimestamp: iso(now + inSeconds * 1000), deletionGracePeriodSeconds: inSeconds, ...(finalizers ? { finalizers } : {}) } };
  });
}

describe('delete: deadlines, races and due objects', () => {
  it('a deadline set in the future by an older version is brought forward; a later delete keeps the first deletionTimestamp', async () => {
    const { registry, store, clock } = newRegistry();
    const start = clock.time;
    await registry.teams.create(team('f', {}, { finalizers: [finalizer] }));
    expect((await registry.teams.delete('f')).object.metadata.deletionTimestamp).toBe(iso(start));
    clock.advance(60);
    const again = await registry.teams.delete('f');
    expect(again.removed).toBe(false);
    expect(again.object.metadata.deletionTimestamp).toBe(iso(start));

    await registry.teams.create(team('g', {}, { finalizers: [finalizer] }));
    await legacyTerminating(store as MemoryStore, clock.time, 'g', 3600);
    const brought = await registry.teams.delete('g');
    expect(brought.removed).toBe(false);
    expect(brought.object.metadata.deletionTimestamp).toBe(iso(clock.time));
    expect(brought.object.metadata.deletionGracePeriodSeconds).toBe(0);
    expect((await registry.teams.get('g')).metadata.deletionTimestamp).toBe(iso(clock.time));
  });

  it('an object without finalizers whose deadline is ahead is removed by the delete; dryRun says so and keeps it', async () => {
    const { registry, store, clock } = newRegistry();
    await registry.teams.create(team('h', { displayName: 'H' }));
    await legacyTerminating(store as MemoryStore, clock.time, 'h', 3600);
    const dry = await registry.teams.delete('h', { dryRun: true });
    expect(dry.removed).toBe(true);
    expect(dry.object.metadata.name).toBe('h');
    expect(dry.object.metadata.deletionTimestamp).toBe(iso(clock.time));
    expect((await registry.teams.get('h')).metadata.deletionTimestamp).toBe(iso(clock.time + 3600_000));
    const real = await registry.teams.delete('h');
    expect(real.removed).toBe(true);
    expect(real.object.spec).toEqual({ displayName: 'H' });
    expect((await statusOf(registry.teams.get('h'))).code).toBe(404);
  });

  it('removeDue removes terminating objects once their deadline passed and no finalizer is left, and names them', async () => {
    const { registry, store, clock } = newRegistry();
    await registry.teams.create(team('due'));
    await registry.teams.create(team('held'));
    await registry.teams.create(team('plain'));
    await legacyTerminating(store as MemoryStore, clock.time, 'due', 60);
    await legacyTerminating(store as MemoryStore, clock.time, 'held', 60, [finalizer]);
    expect(await registry.teams.removeDue()).toEqual([]);
    expect((await registry.teams.get('due')).metadata.name).toBe('due');
    clock.advance(61);
    expect(await registry.teams.removeDue()).toEqual(['due']);
    expect((await statusOf(registry.teams.get('due'))).code).toBe(404);
    expect((await registry.teams.list()).items.map((i) => i.metadata.name)).toEqual(['held', 'plain']);
  });

  it('an object changed between read and removal is read again and removed; changed on every attempt, the delete gives up with 409', async () => {
    const store = new RacingStore();
    const { registry, clock } = newRegistry({ store });
    await registry.teams.create(team('once'));
    store.races = 1;
    const once = await registry.teams.delete('once');
    expect(once.removed).toBe(true);
    expect(once.object.metadata.labels).toEqual({ touched: '1' });

    await registry.teams.create(team('legacy'));
    await legacyTerminating(store, clock.time, 'legacy', 3600);
    store.races = 1;
    const legacy = await registry.teams.delete('legacy');
    expect(legacy.removed).toBe(true);
    expect(legacy.object.metadata.labels).toEqual({ touched: '1' });

    await registry.teams.create(team('busy'));
    store.races = 1_000;
    expect(await statusOf(registry.teams.delete('busy'))).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on teams.management.service "busy": the object has been modified; please apply your changes to the latest version and try again',
    });
    expect(store.races).toBe(1_000 - 16);

    await registry.teams.create(team('due'));
    await legacyTerminating(store, clock.time, 'due', 60);
    clock.advance(61);
    store.races = 1;
    // Changed under the removal: not removed this time, and not named.
    expect(await registry.teams.removeDue()).toEqual([]);
    expect((await registry.teams.get('due')).metadata.labels).toEqual({ touched: '1' });
  });

  it('deletecollection passes over items gone, changed or forbidden since the list, and fails on any other refusal', async () => {
    const { registry } = newRegistry();
    for (const name of ['a', 'gone', 'changed', 'mine-not', 'z']) await registry.teams.create(team(name));
    const refusals: Record<string, ApiError> = {
      gone: notFound(registry.teams.ctx.gr, 'gone'),
      changed: conflict(registry.teams.ctx.gr, 'changed'),
      'mine-not': new ApiError(403, 'Forbidden', 'not yours'),
    };
    const admit = async ({ old }: { old?: KubeObject }) => {
      const refusal = refusals[old!.metadata.name!];
      if (refusal) throw refusal;
    };
    const deleted = await registry.teams.deleteCollection({}, { admit });
    expect(deleted.items.map((i) => i.metadata.name)).toEqual(['a', 'z']);
    expect((await registry.teams.list()).items.map((i) => i.metadata.name)).toEqual(['changed', 'gone', 'mine-not']);

    const failing = await statusOf(registry.teams.deleteCollection({}, { admit: async () => { throw unprocessable('no deletes today'); } }));
    expect(failing).toMatchObject({ code: 422, message: 'no deletes today' });
    expect((await registry.teams.list()).items).toHaveLength(3);
  });

  it('propagation policies: the one given is what admission sees; Foreground adds its finalizer alone; an unknown one is 422 naming the supported', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('fg'));
    const seen: unknown[] = [];
    const admit = async (a: { propagationPolicy?: string }) => void seen.push(a.propagationPolicy);
    const fg = await registry.teams.delete('fg', { propagationPolicy: 'Foreground', admit });
    expect(fg.removed).toBe(false);
    expect(fg.object.metadata.finalizers).toEqual(['foregroundDeletion']);
    await registry.teams.create(team('plain'));
    await registry.teams.delete('plain', { admit });
    expect(seen).toEqual(['Foreground', undefined]);
    expect(await statusOf(registry.teams.delete('fg', { propagationPolicy: 'Sometimes' }))).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan"',
      details: { group: 'meta.k8s.io', kind: 'DeleteOptions' },
    });
  });

  it('deletecollection leaves alone a namesake created between its list and the delete', async () => {
    const store = new ReplacingStore();
    const { registry } = newRegistry({ store });
    await registry.teams.create(team('a'));
    await registry.teams.create(team('b'));
    store.replaceAt = '/teams/b';
    const deleted = await registry.teams.deleteCollection();
    expect(deleted.items.map((i) => i.metadata.name)).toEqual(['a']);
    const kept = await registry.teams.get('b');
    expect([kept.metadata.uid, kept.metadata.labels]).toEqual(['namesake', { namesake: 'yes' }]);
  });
});
