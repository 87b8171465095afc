/**
 * The registry watch where the plain cases (watch.test.ts) do not go: a departure by deletion under
 * a selector, sendInitialEvents (a floor in the future, changes only), a restricted reader's watch
 * from a past revision, and a watch stopped while its store watch is still starting.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, type Status } from '../../src/api/errors.js';
import type { KubeObject, WatchEvent } from '../../src/api/types.js';
import { CountingStore, newRegistry, take, team } from './helpers.js';

const summary = (events: WatchEvent<KubeObject | Status>[]) => events.map((e) => `${e.type} ${(e.object as KubeObject).metadata?.name ?? ''}`.trim());
const owner = (o: KubeObject) => o.metadata.labels?.owner;

describe('watch: the less travelled paths', () => {
  it('an object deleted while it matches the selector is DELETED as it was, at the revision of the deletion', async () => {
    const { registry, store } = newRegistry();
    await registry.teams.create(team('a', { displayName: 'A' }, { labels: { env: 'prod' } }));
    await registry.teams.create(team('b', {}, { labels: { env: 'dev' } }));
    const w = registry.teams.watch({ labelSelector: 'env=prod', resourceVersion: String(await store.currentRevision()) });
    await registry.teams.delete('b');
    await registry.teams.delete('a');
    const gone = await store.currentRevision();
    const events = await take(w, 1);
    expect(summary(events)).toEqual(['DELETED a']);
    const object = events[0]!.object as KubeObject;
    expect(object.metadata.labels).toEqual({ env: 'prod' });
    expect(object.spec).toEqual({ displayName: 'A' });
    expect(object.metadata.resourceVersion).toBe(String(gone));
  });

  it('sendInitialEvents with a resourceVersion ahead of the store: started rejects with 504, no event', async () => {
    const { registry, store } = newRegistry();
    await registry.teams.create(team('a'));
    const ahead = String((await store.currentRevision()) + 100);
    const w = registry.teams.watch({ sendInitialEvents: true, resourceVersion: ahead, allowWatchBookmarks: true });
    const err = await w.started.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).toStatus()).toMatchObject({ code: 504, reason: 'Timeout' });
    expect(await take(w, 1, 500)).toEqual([]);
  });

  it('sendInitialEvents with a reached resourceVersion sends the state, then the initial-events-end bookmark at the list revision', async () => {
    const { registry, store } = newRegistry();
    await registry.teams.create(team('a'));
    const rv = String(await store.currentRevision());
    const events = await take(registry.teams.watch({ sendInitialEvents: true, resourceVersion: rv, allowWatchBookmarks: true }), 2);
    expect(summary(events)).toEqual(['ADDED a', 'BOOKMARK']);
    expect((events[1]!.object as KubeObject).metadata).toEqual({ resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } });
  });

  it('sendInitialEvents=false without a resourceVersion sends only the changes from now', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('a'));
    const w = registry.teams.watch({ sendInitialEvents: false });
    await w.started;
    await registry.teams.patch('a', 'merge', { spec: { displayName: 'A' } });
    await registry.teams.create(team('b'));
    expect(summary(await take(w, 2))).toEqual(['MODIFIED a', 'ADDED b']);
  });

  it('a restricted reader watching from a past revision sees history only of objects still live and still its own; then every change it may see', async () => {
    const { registry, store } = newRegistry();
    await registry.ownedaccesskeys.create({ metadata: { name: 'k' }, spec: { user: 'u' } });
    const from = String(await store.currentRevision()); // not "0", which would list instead
    await registry.teams.create(team('a', {}, { labels: { owner: 'me' } }));
    await registry.teams.create(team('b', {}, { labels: { owner: 'other' } }));
    await registry.teams.create(team('given', {}, { labels: { owner: 'me' } }));
    await registry.teams.patch('given', 'merge', { metadata: { labels: { owner: 'other' } } });
    await registry.teams.create(team('c', {}, { labels: { owner: 'me' } }));
    await registry.teams.delete('c');
    const filter = (o: unknown) => owner(o as KubeObject) === 'me';
    const w = registry.teams.watch({ resourceVersion: from, filter });
    const it = w[Symbol.asyncIterator]();
    const first = await it.next();
    expect(summary([first.value])).toEqual(['ADDED a']);
    await new Promise((r) => setTimeout(r, 20)); // the rest of the history is read meanwhile
    // After the history was read: c comes back (another uid), a changes. Both are live changes.
    await registry.teams.create(team('c', {}, { labels: { owner: 'me' } }));
    await registry.teams.patch('a', 'merge', { spec: { displayName: 'A' } });
    const events = [first.value, ...(await take(w, 2))];
    expect(summary(events)).toEqual(['ADDED a', 'ADDED c', 'MODIFIED a']);
    expect((events[2]!.object as KubeObject).spec).toEqual({ displayName: 'A' });
  });

  it('a watch stopped while its store watch starts leaves no store watch behind and ends', async () => {
    const store = new CountingStore();
    const { registry } = newRegistry({ store });
    await registry.teams.create(team('a'));
    const w = registry.teams.watch({ resourceVersion: String(await store.currentRevision()) });
    store.onWatch = () => w.stop();
    await w.started;
    await new Promise((r) => setImmediate(r));
    expect(store.open).toBe(0);
    await registry.teams.patch('a', 'merge', { spec: { displayName: 'A' } });
    expect(await take(w, 1, 500)).toEqual([]);
  });
});
