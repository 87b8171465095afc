/**
 * Over HTTP: a watch with a resourceVersion far in the future must not stop the server's other
 * followers of the log. The tail is shared by the watch cache, the team index and every API watch;
 * it is restarted by the first subscriber after it went idle (here: a failed read of the log ended
 * every subscription). If that subscriber is a watch from 999999999999999, the tail must still
 * follow the store, or the team index never sees a new team and every request needing it is 503.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { StorageError } from '../../src/store/errors.js';
import type { ListOptions } from '../../src/store/types.js';
import { adminKey, startInProcess, type InProcess } from './in-process.js';
import { openWatch, type Watching } from './watch-client.js';

/** A memory store whose log read fails once on demand, and whose lists can be held off (the cache and the team index then stay unsubscribed). */
class BreakableStore extends MemoryStore {
  holdLists = false;

  override listRows(prefix: string, opts: ListOptions = {}): ReturnType<MemoryStore['listRows']> {
    if (this.holdLists) return Promise.reject(new StorageError('Unreachable', prefix, 'injected: lists held off'));
    return super.listRows(prefix, opts);
  }

  /** The next read of the log for watchers fails with an unexpected error: the tail ends every subscription and is idle. */
  breakTailOnce(): void {
    const backend = this.backend as unknown as { readSince: (after: number, limit: number) => unknown };
    const original = backend.readSince;
    backend.readSince = () => {
      backend.readSince = original;
      throw new Error('injected: reading the log failed');
    };
    this.notifyWatchers();
  }
}

describe('a watch with a resourceVersion in the future, over HTTP', () => {
  let server: InProcess;
  let store: BreakableStore;
  const watches: Watching[] = [];
  beforeAll(async () => {
    store = new BreakableStore();
    // No garbage collector: one follower fewer racing the watch below to restart the tail.
    server = await startInProcess({ store: new CachedStore(store), garbageCollector: false });
  });
  afterAll(async () => {
    for (const w of watches) w.close();
    await server.close();
  });

  it('leaves the team index and other watches following the store: a new member of a new team can sign in', async () => {
    // Every follower of the log (cache, team index, key activity) has subscribed. The break ends
    // their subscriptions; the key activity follower waits 1 s before it subscribes again, the cache
    // and the team index cannot list yet, so the next subscriber of the idle tail is the API watch
    // from the future.
    expect((await server.fetch(`${server.api}/teams`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    store.holdLists = true;
    store.breakTailOnce();
    const future = await openWatch(`${server.api}/teams?watch=true&resourceVersion=999999999999999`, adminKey);
    watches.push(future);
    expect(future.status).toBe(200);
    store.holdLists = false;

    // Another watch, from now: it must see a change made after it opened.
    const other = await openWatch(`${server.api}/teams?watch=true`, adminKey);
    watches.push(other);
    expect(other.status).toBe(200);

    const team = await server.fetch(`${server.api}/teams`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'newcomers' }, spec: { users: ['nina'], clusterRoles: [{ name: 'teams-viewer' }] } }),
    });
    expect(team.status).toBe(201);
    const key = await server.fetch(`${server.api}/ownedaccesskeys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'nina' }, spec: { user: 'nina' } }),
    });
    expect(key.status).toBe(201);
    const ninaKey = ((await key.json()) as { spec: { key: string } }).spec.key;

    const started = Date.now();
    const asNina = await fetch(`${server.api}/teams/newcomers`, { headers: { Authorization: `Bearer ${ninaKey}` } });
    expect(asNina.status, await asNina.clone().text()).toBe(200);
    expect(Date.now() - started).toBeLessThan(2000);

    const added = await other.next((e) => e.type === 'ADDED' && e.object.metadata?.name === 'newcomers', 3000);
    expect(added).toBeDefined();
    // The future watch waits for its revision: nothing yet, and still open.
    expect(future.events.filter((e) => e.type !== 'BOOKMARK')).toEqual([]);
    expect(future.endedAt).toBeUndefined();
  }, 30_000);
});
