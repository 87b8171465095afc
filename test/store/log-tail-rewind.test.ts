/**
 * A store whose revisions go back under a running server (a backup restored, a failover to a
 * replica behind): its new writes take revisions the log's reader had passed. The reader went on
 * reading after its old head, so it never saw them, and the watch cache answered from a timeline
 * that no longer existed (a key gone from the store still authenticated, a 201 create read back as
 * 404) until the process restarted (found by a review). Now the reader notices, every watch ends
 * with 410 Expired, and the cache fills again from the store.
 *
 * The store going back is made here by putting a running MemoryStore's backend back to an earlier
 * copy of itself: what a restore does to the rows, without a second database. The reader notices
 * when the store's revision is below what it read when it next finds nothing new: not when as many
 * writes as were lost, or more, were made before it reads again (docs/postgres.md says to restart
 * the replicas then, as kube-apiserver is after an etcd restore).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/api/secrets.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { isStorageError } from '../../src/store/errors.js';
import { eventually } from '../support/eventually.js';
import { newRegistry, team } from '../registry/helpers.js';

const lostValue = `LostKey${'m'.repeat(41)}`;
/** A stored object as the store itself takes it. */
const row = (name: string) => ({ metadata: { uid: name }, spec: { name } });
const backendFields = ['revision', 'compacted', 'log', 'rows', 'sortedKeys', 'byIndex'];

/** A copy of the store's state now; calling what it gives back puts the store back to it. */
function snapshot(store: MemoryStore): () => void {
  const backend = (store as unknown as { backend: Record<string, unknown> }).backend;
  const copy = structuredClone(Object.fromEntries(backendFields.map((f) => [f, backend[f]])));
  return () => {
    for (const f of backendFields) backend[f] = structuredClone(copy[f]);
  };
}

describe('revisions going back under a running server', () => {
  let cached: CachedStore | undefined;
  afterEach(() => cached?.close());

  it('the watch cache fills again from the store: what was lost is gone from LIST, GET and the key index, what was written since is there', async () => {
    const inner = new MemoryStore();
    cached = new CachedStore(inner, { retryMs: 10 }).start();
    const { registry } = newRegistry({ store: cached });
    expect(await cached.ready()).toBe(true);
    await registry.teams.create(team('a'));
    const restore = snapshot(inner);
    await registry.teams.create(team('lost-1'));
    await registry.teams.create(team('lost-2'));
    await registry.ownedaccesskeys.create({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'lost-key' }, spec: { user: 'mallory', key: lostValue } });
    restore();
    await registry.teams.create(team('new-1'));
    const names = async () => (await registry.teams.list({})).items.map((t) => t.metadata.name);
    await eventually('the cache answers as the store', async () => JSON.stringify(await names()) === JSON.stringify(['a', 'new-1']), { timeoutMs: 5000 });
    await expect(registry.teams.get('lost-1')).rejects.toMatchObject({ code: 404 });
    expect((await registry.teams.get('new-1')).metadata.name).toBe('new-1');
    expect((await registry.ownedaccesskeys.findByIndex(hashKey(lostValue))).items).toEqual([]);
    // And it goes on following: writes past the old head arrive too.
    for (const n of ['new-2', 'new-3', 'new-4']) await registry.teams.create(team(n));
    await eventually('later writes are in the cache', async () => (await names()).length === 5, { timeoutMs: 5000 });
    expect(await names()).toEqual(['a', 'new-1', 'new-2', 'new-3', 'new-4']);
  });

  it("an open watch on the store ends with 410 Expired saying the store's revision went back", async () => {
    const inner = new MemoryStore();
    await inner.create('/teams/a', row('a'));
    const restore = snapshot(inner);
    await inner.create('/teams/lost', row('lost'));
    const watch = inner.watch('/teams/', await inner.currentRevision());
    const events = watch[Symbol.asyncIterator]();
    await inner.create('/teams/lost-too', row('lost-too'));
    expect((await events.next()).value).toMatchObject({ type: 'ADDED', key: '/teams/lost-too', revision: 3 });
    restore();
    await inner.create('/teams/new', row('new'));
    const ended = await events.next().then((e) => e, (err: unknown) => err);
    expect(isStorageError(ended, 'Expired')).toBe(true);
    expect((ended as Error).message).toContain("the store's revision went back from 3 to 2 (restored from a backup, or failed over to a replica behind it): list again");
    await inner.close();
  });
});
