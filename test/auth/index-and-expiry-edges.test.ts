/**
 * The team index's answers outside its steady state (before it has loaded, after it stopped, when
 * its watch ends by itself), the fixed world of teams the access review decides against, and the
 * removal of expired keys when another writer gets there first or the store fails.
 */
import pino from 'pino';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { OwnedAccessKey, Team } from '../../src/api/types.js';
import { ActivityRecorder } from '../../src/auth/activity.js';
import { removeExpiredKeys } from '../../src/auth/expired-keys.js';
import { TeamIndex, teamWorldOf } from '../../src/auth/team-index.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { StorageError } from '../../src/store/errors.js';
import type { ListOptions, ListResult, Preconditions, StoredObject, StoreWatch } from '../../src/store/types.js';
import { accessKey, newRegistry, statusOf, team } from '../registry/helpers.js';
import { eventually } from '../support/eventually.js';
import { interruptedWatch } from '../support/interrupted-watch.js';

/** A memory store whose watches can be ended cleanly and whose deletes can meet another writer or fail (the fault is faked, not the store). */
class EdgyStore extends MemoryStore {
  private readonly ends: (() => void)[] = [];
  /** Before a delete: another writer changes the object first (a real conflict follows). */
  changeBeforeDelete?: (key: string) => Promise<void>;
  failDeletes = false;

  override watch<T extends StoredObject>(prefix: string, fromRevision: number): StoreWatch<T> {
    const inner = super.watch<T>(prefix, fromRevision);
    let end: () => void = () => {};
    const ended = new Promise<IteratorResult<never>>((resolve) => (end = () => resolve({ done: true, value: undefined })));
    this.ends.push(end);
    return interruptedWatch(inner, ended);
  }

  /** Ends every open watch as a finished iteration, without an error. */
  endWatches(): void {
    for (const end of this.ends.splice(0)) end();
  }

  /** After the first page of a paged list is read: another writer's change before the next page. */
  afterFirstPage?: () => Promise<void>;

  override async list<T extends StoredObject>(prefix: string, opts?: ListOptions): Promise<ListResult<T>> {
    const page = await super.list<T>(prefix, opts);
    const hook = this.afterFirstPage;
    if (hook && !opts?.after && page.continueAfter) {
      this.afterFirstPage = undefined;
      await hook();
    }
    return page;
  }

  override async delete<T extends StoredObject>(key: string, preconditions?: Preconditions, opts?: Parameters<MemoryStore['delete']>[2]): Promise<T> {
    if (this.failDeletes) throw new StorageError('Unreachable', key, 'injected delete failure');
    const change = this.changeBeforeDelete;
    this.changeBeforeDelete = undefined;
    if (change) await change(key);
    return super.delete<T>(key, preconditions, opts as never);
  }
}

function logged() {
  const lines: { msg: string; err?: { message?: string } }[] = [];
  const log = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { lines, log };
}

describe('the team index outside its steady state', () => {
  it('before it has loaded, and after it stopped, it refuses with a 503 saying which', async () => {
    const { registry } = newRegistry();
    const index = new TeamIndex(registry.teams, pino({ level: 'silent' }));
    expect(await statusOf(Promise.resolve().then(() => index.require()))).toMatchObject({ code: 503, message: 'the team index is still loading; authorization is not possible until it is complete' });
    await index.start();
    index.stop();
    expect(await statusOf(index.caughtUp(1_000_000))).toMatchObject({ code: 503, message: 'the server is shutting down; try again' });
  });

  it('a watch that ends by itself is logged as such and the index reloads', async () => {
    const store = new EdgyStore();
    const { registry } = newRegistry({ store });
    const { lines, log } = logged();
    const index = new TeamIndex(registry.teams, log, 10);
    await index.start();
    try {
      store.endWatches();
      await eventually('the end is logged', () => lines.length > 0, 2000);
      expect(lines[0]).toMatchObject({ msg: 'team index watch ended; reloading', err: { message: 'the watch ended' } });
      // Reloaded and following again: a team made now is seen.
      await registry.teams.create(team('later', {}), { fieldManager: 'test' });
      await eventually('the new team is indexed', () => index.get('later'), 2000);
    } finally {
      index.stop();
    }
  });

  it('a team deleted while the index lists its pages is not kept: every page is read at the first one\'s revision, and the watch replays from there', async () => {
    const store = new EdgyStore();
    const { registry } = newRegistry({ store });
    // More than one page (1000 teams a page).
    for (let i = 0; i < 1001; i++) await registry.teams.create(team(`t${String(i).padStart(4, '0')}`, {}), { fieldManager: 'test' });
    store.afterFirstPage = async () => void (await registry.teams.delete('t0000'));
    const index = new TeamIndex(registry.teams, pino({ level: 'silent' }));
    await index.start();
    try {
      expect(index.get('t1000')).toBeDefined();
      await eventually('the deletion is applied', () => index.get('t0000') === undefined, 2000);
    } finally {
      index.stop();
    }
  });

  it("the access review's fixed world names its teams in order", () => {
    const world = teamWorldOf(['zeta', 'alpha', 'mid'].map((name) => team(name, {}) as Team));
    expect(world.names()).toEqual(['alpha', 'mid', 'zeta']);
  });
});

describe('removing expired keys', () => {
  async function expiredWorld() {
    const store = new EdgyStore();
    const { registry, clock } = newRegistry({ store });
    await registry.ownedaccesskeys.create(accessKey('old', { user: 'ana', ttl: 60 }), { fieldManager: 'test' });
    const activity = new ActivityRecorder(registry.ownedaccesskeys, 60_000, pino({ level: 'silent' }));
    const later = new Date(Date.parse(clock.now().toISOString()) + 3600_000);
    return { store, registry, activity, later };
  }

  it('a key another writer changed meanwhile is left for the next round', async () => {
    const { store, registry, activity, later } = await expiredWorld();
    store.changeBeforeDelete = async () => {
      const key = (await registry.ownedaccesskeys.get('old')) as OwnedAccessKey;
      await registry.ownedaccesskeys.update('old', { ...key, spec: { ...key.spec, displayName: 'touched' } }, { fieldManager: 'other' });
    };
    expect(await removeExpiredKeys(registry.ownedaccesskeys, activity, later, 0)).toEqual([]);
    expect(await removeExpiredKeys(registry.ownedaccesskeys, activity, later, 0)).toEqual(['old']);
  });

  it('a store failure is thrown to the caller, not taken for a lost race', async () => {
    const { store, registry, activity, later } = await expiredWorld();
    store.failDeletes = true;
    await expect(removeExpiredKeys(registry.ownedaccesskeys, activity, later, 0)).rejects.toThrow('injected delete failure');
  });
});
