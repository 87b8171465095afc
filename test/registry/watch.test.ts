import { describe, expect, it } from 'vitest';
import type { Status } from '../../src/api/errors.js';
import type { KubeObject, WatchEvent } from '../../src/api/types.js';
import { newRegistry, take, team } from './helpers.js';

const summary = (events: WatchEvent<KubeObject | Status>[]) =>
  events.map((e) => `${e.type} ${(e.object as KubeObject).metadata?.name ?? ''}`.trim());

describe('watch', () => {
  it('without a resourceVersion sends the current objects as ADDED, then changes', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('a'));
    await registry.teams.create(team('b'));
    const w = registry.teams.watch();
    setTimeout(() => void registry.teams.patch('a', 'merge', { spec: { displayName: 'A' } }), 20);
    const events = await take(w, 3);
    expect(summary(events)).toEqual(['ADDED a', 'ADDED b', 'MODIFIED a']);
    expect(((events[2]!.object as KubeObject).spec as { displayName: string }).displayName).toBe('A');
  });

  it('from a resourceVersion sends exactly the later events in order', async () => {
    const { registry } = newRegistry();
    const { object } = await registry.teams.create(team('a'));
    await registry.teams.create(team('b'));
    await registry.ownedaccesskeys.create({ metadata: { name: 'k' }, spec: { user: 'u' } });
    await registry.teams.delete('a');
    const events = await take(registry.teams.watch({ resourceVersion: object.metadata.resourceVersion! }), 2);
    expect(summary(events)).toEqual(['ADDED b', 'DELETED a']);
    const rvs = events.map((e) => Number((e.object as KubeObject).metadata.resourceVersion));
    expect(rvs[0]).toBeLessThan(rvs[1]!);
  });

  it('with a label selector, objects entering and leaving it are ADDED and DELETED', async () => {
    const { registry, store } = newRegistry();
    await registry.teams.create(team('a', {}, { labels: { env: 'dev' } }));
    const w = registry.teams.watch({ labelSelector: 'env=prod', resourceVersion: String(await store.currentRevision()) });
    await registry.teams.patch('a', 'merge', { metadata: { labels: { env: 'prod' } } });
    await registry.teams.patch('a', 'merge', { spec: { displayName: 'x' } });
    await registry.teams.patch('a', 'merge', { metadata: { labels: { env: 'dev' } } });
    await registry.teams.create(team('other', {}, { labels: { env: 'dev' } }));
    await registry.teams.create(team('b', {}, { labels: { env: 'prod' } }));
    const events = await take(w, 4);
    expect(summary(events)).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a', 'ADDED b']);
    // The departure carries the version that matched (kube's cacher), at the revision of the change.
    const left = events[2]!.object as KubeObject;
    expect(left.metadata.labels).toEqual({ env: 'prod' });
    expect((left.spec as { displayName: string }).displayName).toBe('x');
    expect(Number(left.metadata.resourceVersion)).toBeGreaterThan(Number((events[1]!.object as KubeObject).metadata.resourceVersion));
  });

  it('watches of one change share one frozen event per version: the server encodes it once for all of them', async () => {
    const { registry, store } = newRegistry();
    await registry.teams.create(team('a', {}, { labels: { env: 'prod' } }));
    const from = String(await store.currentRevision());
    const [w1, w2, gone] = [registry.teams.watch({ resourceVersion: from }), registry.teams.watch({ resourceVersion: from }), registry.teams.watch({ resourceVersion: from, labelSelector: 'env=prod' })];
    await registry.teams.patch('a', 'merge', { metadata: { labels: { env: 'dev' } }, spec: { displayName: 'A' } });
    const [[e1], [e2], [left]] = await Promise.all([take(w1, 1), take(w2, 1), take(gone, 1)]);
    expect(e1!.type).toBe('MODIFIED');
    expect(e2).toBe(e1);
    expect(Object.isFrozen(e1) && Object.isFrozen(e1!.object)).toBe(true);
    // A reader cannot change what the others send (ES modules are strict: the write throws).
    expect(() => ((e1!.object as KubeObject).spec = {})).toThrow(TypeError);
    expect(((e2!.object as KubeObject).spec as { displayName: string }).displayName).toBe('A');
    // The selector's departure is another version of the same change: the one that matched, at the change's revision.
    expect(left!.type).toBe('DELETED');
    expect(left).not.toBe(e1);
    expect((left!.object as KubeObject).metadata.labels).toEqual({ env: 'prod' });
    expect((left!.object as KubeObject).metadata.resourceVersion).toBe((e1!.object as KubeObject).metadata.resourceVersion);
  });

  it('sends bookmarks carrying a resourceVersion when asked', async () => {
    const { registry, store } = newRegistry();
    await registry.teams.create(team('a'));
    const rv = await store.currentRevision();
    const events = await take(registry.teams.watch({ resourceVersion: String(rv), allowWatchBookmarks: true, bookmarkIntervalMs: 20 }), 1);
    expect(events[0]!.type).toBe('BOOKMARK');
    expect(events[0]!.object).toEqual({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { resourceVersion: String(rv) } });
  });

  it('a resourceVersion older than the retained history gives one ERROR event with a 410 Status', async () => {
    const { registry, store } = newRegistry();
    const { object } = await registry.teams.create(team('a'));
    await registry.teams.patch('a', 'merge', { spec: { displayName: 'x' } });
    await store.compact(await store.currentRevision());
    const events = await take(registry.teams.watch({ resourceVersion: object.metadata.resourceVersion! }), 5);
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe('ERROR');
    expect(events[0]!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    expect((events[0]!.object as Status).message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
  });
});
