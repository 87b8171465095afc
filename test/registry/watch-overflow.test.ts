/**
 * A reader that falls more than 10,000 events behind is cut off with a 410 (it lists again), told
 * at once to whoever listens (whenOverflowed) and, for a reader that does not, at the end of the
 * iteration. Objects are written straight to the store: 10,001 changes, no API cost per change.
 */
import { describe, expect, it } from 'vitest';
import type { Status } from '../../src/api/errors.js';
import type { KubeObject } from '../../src/api/types.js';
import { newRegistry, team } from './helpers.js';

describe('watch: a reader more than 10,000 events behind', () => {
  it('gets a 410 Gone through whenOverflowed at once, and the iteration ends on it after what was queued', async () => {
    const { registry, store } = newRegistry();
    await registry.teams.create(team('seed'));
    const w = registry.teams.watch({ resourceVersion: String(await store.currentRevision()) });
    await w.started;
    const told: Status[] = [];
    w.whenOverflowed((s) => told.push(s));
    for (let i = 0; i < 10_001; i++) {
      await store.create(`/teams/t${i}`, { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: `t${i}`, uid: `u${i}` }, spec: {} });
    }
    await new Promise((r) => setTimeout(r, 20));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ kind: 'Status', status: 'Failure', code: 410, reason: 'Gone', message: expect.stringContaining('watcher fell more than 10000 events behind') });
    // A listener added late hears of it too, once.
    const late: Status[] = [];
    w.whenOverflowed((s) => late.push(s));
    expect(late).toEqual(told);
    let received = 0;
    let ended: unknown;
    try {
      for await (const e of w) if ((e.object as KubeObject).metadata.name?.startsWith('t')) received++;
    } catch (err) {
      ended = err;
    }
    expect(received).toBe(10_000);
    // The queue's own error, which the server answers as the same 410.
    expect(ended).toMatchObject({ code: 'WatchOverflow', message: 'watcher fell more than 10000 events behind' });
    expect(told).toHaveLength(1);
  });
});
