/**
 * How a registry watch ends, and what it sends on the way, where watch.test.ts and
 * watch-edges.test.ts do not look: a stop while streaming (its store watch and bookmark timer
 * stopped), storage lost as the store watch starts (503 before the stream) or while it streams (one
 * ERROR event), a store failure that is no storage error (the iteration fails with it), a change
 * a selector never matched (no event), and bookmarks without a watch-list (no initial-events-end).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, type Status } from '../../src/api/errors.js';
import type { KubeObject, WatchEvent } from '../../src/api/types.js';
import { StorageError } from '../../src/store/errors.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import type { ListOptions, ListResult, StoreEvent, StoredObject, StoreWatch } from '../../src/store/types.js';
import { eventually } from '../support/eventually.js';
import { CountingStore, newRegistry, take, team } from './helpers.js';

const summary = (events: WatchEvent<KubeObject | Status>[]) => events.map((e) => `${e.type} ${(e.object as KubeObject).metadata?.name ?? ''}`.trim());

/**
 * A store whose watches can be made to fail: as they start (`started` rejects) or at their first
 * event (the iteration throws). Counts the watches not stopped (CountingStore).
 */
class FailingWatchStore extends CountingStore {
  failStart: unknown;
  failStream: unknown;
  override watch<T extends StoredObject>(prefix: string, fromRevision: number): StoreWatch<T> {
    const sw = super.watch<T>(prefix, fromRevision);
    if (this.failStart !== undefined) {
      const err = this.failStart;
      sw.started = sw.started.then(() => Promise.reject(err));
    }
    if (this.failStream !== undefined) {
      const err = this.failStream;
      sw[Symbol.asyncIterator] = (): AsyncIterator<StoreEvent<T>> => ({ next: () => Promise.reject(err) });
    }
    return sw;
  }
}

/** A store that runs `afterList` (once) when a list has been read, before it is answered: a write racing a watch's initial list. */
class RacingListStore extends MemoryStore {
  afterList: (() => Promise<void>) | undefined;
  override async list<T extends StoredObject>(prefix: string, opts?: ListOptions): Promise<ListResult<T>> {
    const page = await super.list<T>(prefix, opts);
    const race = this.afterList;
    this.afterList = undefined;
    await race?.();
    return page;
  }
}

/** A registry on a FailingWatchStore holding team a; the store is set to fail as given. */
async function failingRegistry(fail: { failStart?: unknown; failStream?: unknown }) {
  const store = new FailingWatchStore();
  const { registry } = newRegistry({ store });
  await registry.teams.create(team('a'));
  Object.assign(store, fail);
  return { registry, store, rv: String(await store.currentRevision()) };
}

/** Every event until the iteration ends (or the bound passes: then the watch is stopped), and the error it ended with. */
async function drain(w: AsyncIterable<WatchEvent<KubeObject | Status>> & { stop(): void }, timeoutMs = 3000) {
  const events: WatchEvent<KubeObject | Status>[] = [];
  const timer = setTimeout(() => w.stop(), timeoutMs);
  let error: unknown;
  try {
    for await (const e of w) events.push(e);
  } catch (err) {
    error = err;
  }
  clearTimeout(timer);
  return { events, error };
}

describe('watch: how it ends', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a watch stopped while streaming stops its store watch and its bookmark timer, and its iteration ends', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { registry, store, rv } = await failingRegistry({});
    const w = registry.teams.watch({ resourceVersion: rv, allowWatchBookmarks: true, bookmarkIntervalMs: 1000 });
    await w.started;
    await eventually('the bookmark timer runs', () => vi.getTimerCount() === 1);
    expect(store.open).toBe(1);
    w.stop();
    expect(store.open).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(await drain(w, 500)).toEqual({ events: [], error: undefined });
  });

  it('storage lost as the store watch starts: started rejects with 503, nothing is sent, no store watch is left', async () => {
    const { registry, store, rv } = await failingRegistry({ failStart: new StorageError('Unreachable', '', 'database down') });
    const w = registry.teams.watch({ resourceVersion: rv });
    const err = await w.started.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).toStatus()).toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
    expect(store.open).toBe(0);
    expect(await drain(w, 500)).toEqual({ events: [], error: undefined });
  });

  it('storage lost while streaming: one ERROR event with the 503 Status, then the end', async () => {
    const { registry, rv } = await failingRegistry({ failStream: new StorageError('Unreachable', '', 'database down') });
    const w = registry.teams.watch({ resourceVersion: rv });
    await w.started;
    const { events, error } = await drain(w);
    expect(error).toBeUndefined();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', status: 'Failure', code: 503, reason: 'ServiceUnavailable' } });
  });

  it('a store failure that is no storage error ends the iteration with that error, after the initial objects', async () => {
    const bug = new TypeError('a bug in the store');
    const { registry } = await failingRegistry({ failStream: bug });
    const w = registry.teams.watch();
    await w.started;
    const { events, error } = await drain(w);
    expect(summary(events)).toEqual(['ADDED a']);
    expect(error).toBe(bug);
  });
});

describe('watch: what it sends', () => {
  it('a change to an object the selector matched neither before nor after sends nothing', async () => {
    const { registry, store } = newRegistry();
    await registry.teams.create(team('a', {}, { labels: { env: 'dev' } }));
    const w = registry.teams.watch({ labelSelector: 'env=prod', resourceVersion: String(await store.currentRevision()) });
    await registry.teams.patch('a', 'merge', { spec: { displayName: 'A' } });
    await registry.teams.create(team('b', {}, { labels: { env: 'prod' } }));
    expect(summary(await take(w, 1))).toEqual(['ADDED b']);
  });

  it('a restricted reader without a resourceVersion sees an object made and removed while its list was read out: the changes after a list are no history to check', async () => {
    const store = new RacingListStore();
    const { registry } = newRegistry({ store });
    store.afterList = async () => {
      const x = { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'x', uid: 'ux', labels: { owner: 'me' } }, spec: {} };
      await store.create('/teams/x', x);
      await store.delete('/teams/x');
    };
    const w = registry.teams.watch({ filter: (o) => (o as KubeObject).metadata.labels?.owner === 'me' });
    await w.started;
    expect(store.afterList).toBeUndefined();
    expect(summary(await take(w, 2))).toEqual(['ADDED x', 'DELETED x']);
  });

  it('bookmarks without sendInitialEvents: the initial objects are followed by the changes, no initial-events-end bookmark', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('a'));
    const w = registry.teams.watch({ allowWatchBookmarks: true });
    await w.started;
    await registry.teams.create(team('b'));
    expect(summary(await take(w, 2))).toEqual(['ADDED a', 'ADDED b']);
  });
});
