/**
 * Failing closed over HTTP: while the team index cannot list teams (its watch broke) and the store
 * has moved past what it saw, requests that need it get 503 with Retry-After rather than answers
 * from teams as they were; a store that fails
 * on the authentication path is a 503 too, never a 500 or a 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { StorageError } from '../../src/store/errors.js';
import type { ListOptions, ListResult, StoredObject, StoreWatch } from '../../src/store/types.js';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { eventually } from '../support/eventually.js';
import { interruptedWatch } from '../support/interrupted-watch.js';

/** A memory store whose lists, index reads and watches fail on demand (the fault, not the index, is faked). */
class FaultyStore extends MemoryStore {
  failLists = false;
  failReads = false;
  /** The store's revision cannot be read (what a watch cache asks before it answers). */
  failRevision = false;
  private readonly cuts: (() => void)[] = [];

  override list<T extends StoredObject>(prefix: string, opts?: ListOptions): Promise<ListResult<T>> {
    if (this.failLists) return Promise.reject(new StorageError('Unreachable', prefix, 'injected list failure'));
    return super.list<T>(prefix, opts);
  }

  override getByIndex<T extends StoredObject>(prefix: string, value: string): Promise<T[]> {
    if (this.failReads) return Promise.reject(new StorageError('Unreachable', prefix, 'injected read failure'));
    return super.getByIndex<T>(prefix, value);
  }

  override currentRevision(): Promise<number> {
    if (this.failRevision) return Promise.reject(new StorageError('Unreachable', '', 'injected revision failure'));
    return super.currentRevision();
  }

  override watch<T extends StoredObject>(prefix: string, fromRevision: number): StoreWatch<T> {
    const inner = super.watch<T>(prefix, fromRevision);
    let cut: (err: Error) => void = () => {};
    const cutOff = new Promise<never>((_, reject) => (cut = reject));
    cutOff.catch(() => {});
    this.cuts.push(() => cut(new StorageError('Unreachable', prefix, 'injected watch failure')));
    return interruptedWatch(inner, cutOff);
  }

  /** Ends every open watch with an error, as a dropped database connection would. */
  cutWatches(): void {
    for (const c of this.cuts.splice(0)) c();
  }
}

describe('fail closed', () => {
  let server: InProcess;
  let store: FaultyStore;
  beforeAll(async () => {
    store = new FaultyStore();
    server = await startInProcess({ store });
  });
  afterAll(() => server.close());

  const get = () => server.fetch(`${server.api}/teams/admins`);

  it('a team index that cannot follow or relist decides only while the store has not moved past it; then 503 with Retry-After until a list completes', async () => {
    expect((await get()).status).toBe(200);
    store.failLists = true;
    store.cutWatches();
    // Nothing was written since the index last saw the teams: it is exact, and a storage fault that
    // stops its watch does not take the API down with it.
    await new Promise((r) => setTimeout(r, 300)); // the index has noticed and its first relist failed
    expect((await get()).status).toBe(200);
    // A write it cannot see (this one is admitted: the index was current when it was judged).
    expect((await server.fetch(`${server.api}/teams`, { method: 'POST', body: JSON.stringify({ metadata: { name: 'unseen' } }), headers: { 'content-type': 'application/json' } })).status).toBe(201);
    // From now on no request is decided on the index: it may miss that write (5 s wait, then 503).
    const res = await get();
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toMatchObject({ kind: 'Status', code: 503, reason: 'ServiceUnavailable', message: 'the team index is behind the store; try again' });
    store.failLists = false;
    await eventually('the read is served again', async () => (await get()).status === 200);
  }, 20_000);

  it('a store failing on the authentication path is a 503 with Retry-After', async () => {
    store.failReads = true;
    try {
      const res = await get();
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toMatchObject({ reason: 'ServiceUnavailable', message: 'storage is unavailable: injected read failure' });
    } finally {
      store.failReads = false;
    }
    expect((await get()).status).toBe(200);
  });
});

describe('fail closed over the watch cache', () => {
  let server: InProcess;
  let store: FaultyStore;
  beforeAll(async () => {
    store = new FaultyStore();
    server = await startInProcess({ store: new CachedStore(store).start() });
  });
  afterAll(() => server.close());

  // Discovery reads nothing after authentication: only the key lookup can refuse it.
  const discover = () => server.fetch(server.api);

  it('a store out of reach stops authentication from the cache within a second: 503, never an answer nobody vouches for', async () => {
    expect((await discover()).status).toBe(200);
    store.failRevision = true;
    try {
      const started = Date.now();
      // Within a second on a quiet machine; ten times that only catches a cache that keeps answering.
      await eventually('discovery answers 503', async () => (await discover()).status === 503, 10_000);
      expect(Date.now() - started).toBeLessThan(10_000);
      const res = await discover();
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toMatchObject({ reason: 'ServiceUnavailable', message: 'storage is unavailable: injected revision failure' });
    } finally {
      store.failRevision = false;
    }
    expect((await discover()).status).toBe(200);
  });
});
