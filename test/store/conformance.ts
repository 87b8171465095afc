/** One behaviour contract for every Store backend: each backend's test file runs this suite. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isStorageError, type StorageErrorCode } from '../../src/store/errors.js';
import type { LogBackend } from '../../src/store/log/log-backend.js';
import { Removal, type Store, type StoreEvent, type StoredObject } from '../../src/store/types.js';

export interface StoreFixture {
  store: Store;
  /** A second handle on the same data, for backends several processes can share. */
  reopen?: () => Store;
  cleanup(): Promise<void>;
}

interface Obj extends StoredObject {
  metadata: { name: string; uid?: string; resourceVersion?: string };
  spec?: { n?: number; note?: string };
}

const obj = (name: string, n = 0): Obj => ({ metadata: { name, uid: `uid-${name}` }, spec: { n } });

async function expectStorageError(p: Promise<unknown>, code: StorageErrorCode): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isStorageError(err), `expected StorageError ${code}, got ${String(err)}`).toBe(true);
  expect((err as { code: string }).code).toBe(code);
}

/** Reads events from a watch until `count` arrived or the deadline passed. */
export async function collect<T extends StoredObject>(
  watch: AsyncIterable<StoreEvent<T>> & { stop(): void },
  count: number,
  timeoutMs = 5000,
): Promise<StoreEvent<T>[]> {
  const events: StoreEvent<T>[] = [];
  const timer = setTimeout(() => watch.stop(), timeoutMs);
  try {
    for await (const e of watch) {
      events.push(e);
      if (events.length >= count) break;
    }
  } finally {
    clearTimeout(timer);
    watch.stop();
  }
  return events;
}

export interface ConformanceOptions {
  /** The backend can be opened twice on the same data (SQLite file, PostgreSQL database). */
  sharedHandles: boolean;
}

export function describeStoreConformance(
  name: string,
  makeFixture: () => Promise<StoreFixture>,
  opts: ConformanceOptions,
): void {
  describe(`Store conformance: ${name}`, () => {
    let fx: StoreFixture;
    let store: Store;
    beforeEach(async () => {
      fx = await makeFixture();
      store = fx.store;
    });
    afterEach(async () => {
      await fx.cleanup();
    });

    it('creates and gets objects with a resourceVersion from one global revision', async () => {
      const a = await store.create('/teams/a', obj('a'));
      const b = await store.create('/ownedaccesskeys/b', obj('b'));
      expect(Number(b.metadata.resourceVersion)).toBeGreaterThan(Number(a.metadata.resourceVersion));
      expect(await store.currentRevision()).toBe(Number(b.metadata.resourceVersion));
      const got = await store.get<Obj>('/teams/a');
      expect(got).toEqual(a);
      await expectStorageError(store.create('/teams/a', obj('a')), 'KeyExists');
      await expectStorageError(store.get('/teams/missing'), 'NotFound');
    });

    it('updates with guaranteedUpdate, and a write that changes nothing keeps the resourceVersion', async () => {
      const created = await store.create('/teams/a', obj('a', 1));
      const updated = await store.guaranteedUpdate<Obj>('/teams/a', undefined, (cur) => ({
        ...cur,
        spec: { n: (cur.spec?.n ?? 0) + 1 },
      }));
      expect(updated.spec?.n).toBe(2);
      expect(Number(updated.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
      const revision = await store.currentRevision();
      const same = await store.guaranteedUpdate<Obj>('/teams/a', undefined, (cur) => cur);
      expect(same.metadata.resourceVersion).toBe(updated.metadata.resourceVersion);
      expect(await store.currentRevision()).toBe(revision);
      await expectStorageError(store.guaranteedUpdate('/teams/none', undefined, (c) => c), 'NotFound');
    });

    it('removes the object when tryUpdate answers a Removal, deciding again if it changed meanwhile', async () => {
      await store.create('/teams/a', obj('a', 1));
      const from = await store.currentRevision();
      let calls = 0;
      const removed = await store.guaranteedUpdate<Obj>('/teams/a', undefined, async (cur) => {
        calls++;
        // The first decision races with another writer: the store must not delete the newer version blindly.
        if (calls === 1) await store.guaranteedUpdate<Obj>('/teams/a', undefined, (c) => ({ ...c, spec: { n: 7 } }));
        return new Removal(cur);
      });
      expect(calls).toBe(2);
      expect(removed.spec?.n).toBe(7);
      await expectStorageError(store.get('/teams/a'), 'NotFound');
      const watch = store.watch<Obj>('/teams/', from);
      const seen: string[] = [];
      for await (const ev of watch) {
        seen.push(`${ev.type}:${ev.object.spec?.n}`);
        if (ev.type === 'DELETED') break;
      }
      watch.stop();
      expect(seen).toEqual(['MODIFIED:7', 'DELETED:7']);
    });

    it('checks uid and resourceVersion preconditions', async () => {
      const a = await store.create('/teams/a', obj('a'));
      await expectStorageError(
        store.guaranteedUpdate('/teams/a', { uid: 'other' }, (c) => c),
        'PreconditionFailed',
      );
      await expectStorageError(
        store.guaranteedUpdate('/teams/a', { resourceVersion: '999999' }, (c) => c),
        'PreconditionFailed',
      );
      await expectStorageError(store.delete('/teams/a', { uid: 'other' }), 'PreconditionFailed');
      const ok = await store.guaranteedUpdate<Obj>(
        '/teams/a',
        { uid: 'uid-a', resourceVersion: a.metadata.resourceVersion! },
        (c) => ({ ...c, spec: { n: 5 } }),
      );
      expect(ok.spec?.n).toBe(5);
    });

    it('gives exactly one winner among concurrent updates with the same resourceVersion precondition', async () => {
      const a = await store.create('/teams/a', obj('a'));
      const attempts = Array.from({ length: 12 }, (_, i) =>
        store.guaranteedUpdate<Obj>('/teams/a', { resourceVersion: a.metadata.resourceVersion! }, async (cur) => {
          await new Promise((r) => setTimeout(r, 1));
          return { ...cur, spec: { n: i + 1 } };
        }),
      );
      const results = await Promise.allSettled(attempts);
      const winners = results.filter((r) => r.status === 'fulfilled');
      expect(winners).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') expect(isStorageError(r.reason, 'PreconditionFailed')).toBe(true);
      }
      const final = await store.get<Obj>('/teams/a');
      expect(final.spec?.n).toBe((winners[0] as PromiseFulfilledResult<Obj>).value.spec?.n);
    });

    it('loses no increment when concurrent updates race without a precondition', async () => {
      await store.create('/teams/counter', obj('counter', 0));
      await Promise.all(
        Array.from({ length: 25 }, () =>
          store.guaranteedUpdate<Obj>('/teams/counter', undefined, async (cur) => {
            await new Promise((r) => setTimeout(r, Math.random() * 3));
            return { ...cur, spec: { n: (cur.spec?.n ?? 0) + 1 } };
          }),
        ),
      );
      expect((await store.get<Obj>('/teams/counter')).spec?.n).toBe(25);
    });

    it('deletes, returns the deleted object, and allows the key to be created again', async () => {
      await store.create('/teams/a', obj('a', 7));
      const deleted = await store.delete<Obj>('/teams/a');
      expect(deleted.spec?.n).toBe(7);
      expect(Number(deleted.metadata.resourceVersion)).toBe(await store.currentRevision());
      await expectStorageError(store.get('/teams/a'), 'NotFound');
      await expectStorageError(store.delete('/teams/a'), 'NotFound');
      const again = await store.create('/teams/a', obj('a', 8));
      expect(again.spec?.n).toBe(8);
    });

    it('lists a prefix in key order with limit and continue, at a consistent revision', async () => {
      for (const n of ['c', 'a', 'e', 'b', 'd']) await store.create(`/teams/${n}`, obj(n));
      await store.create('/teamsx/zzz', obj('zzz'));
      await store.create('/ownedaccesskeys/k', obj('k'));
      const first = await store.list<Obj>('/teams/', { limit: 2 });
      expect(first.items.map((i) => i.metadata.name)).toEqual(['a', 'b']);
      expect(first.continueAfter).toBe('/teams/b');
      // Changes after the first page are invisible to later pages read at the first page's revision.
      await store.delete('/teams/c');
      await store.create('/teams/bb', obj('bb'));
      const second = await store.list<Obj>('/teams/', { limit: 2, after: first.continueAfter!, revision: first.revision });
      expect(second.items.map((i) => i.metadata.name)).toEqual(['c', 'd']);
      const third = await store.list<Obj>('/teams/', { limit: 2, after: second.continueAfter!, revision: first.revision });
      expect(third.items.map((i) => i.metadata.name)).toEqual(['e']);
      expect(third.continueAfter).toBeUndefined();
      const now = await store.list<Obj>('/teams/');
      expect(now.items.map((i) => i.metadata.name)).toEqual(['a', 'b', 'bb', 'd', 'e']);
      await expectStorageError(store.list('/teams/', { revision: now.revision + 100 }), 'TooLargeResourceVersion');
      // `after` below the prefix starts at the prefix (not before it); at or past its end gives nothing.
      const below = await store.list<Obj>('/teams/', { limit: 2, after: '/ownedaccesskeys/k' });
      expect(below.items.map((i) => i.metadata.name)).toEqual(['a', 'b']);
      expect((await store.list<Obj>('/teams/', { after: '/teams/' })).items.map((i) => i.metadata.name)).toEqual(['a', 'b', 'bb', 'd', 'e']);
      expect((await store.list<Obj>('/teams/', { after: '/teams/e' })).items).toEqual([]);
      expect((await store.list<Obj>('/teams/', { after: '/teamsx/' })).items).toEqual([]);
    });

    it('scans a prefix page by page, decoding only the rows the raw prefilter accepts', async () => {
      for (let i = 0; i < 7; i++) await store.create(`/teams/t${i}`, obj(`t${i}`, i));
      await store.create('/teamsx/t9', obj('t9', 9));
      await store.delete('/teams/t3');
      const seen: string[] = [];
      const names: string[] = [];
      // Pages of 2 over 6 live rows: the prefilter sees every live row once, in key order.
      for await (const o of store.scan<Obj>('/teams/', (raw) => (seen.push(raw), /"n":[024]\b/.test(raw)), 2)) names.push(o.metadata.name!);
      expect(seen).toHaveLength(6);
      expect(names).toEqual(['t0', 't2', 't4']);
    });

    it('scans for a text the backend tests where the rows are: only live rows whose current version holds it, page by page', async () => {
      const note = 'a"b\\c😀é';
      const text = JSON.stringify(note).slice(1, -1);
      const noted = (name: string, held: boolean): Obj => ({ ...obj(name), spec: { n: 0, note: held ? note : 'plain' } }) as Obj;
      for (let i = 0; i < 7; i++) await store.create(`/teams/t${i}`, noted(`t${i}`, i % 2 === 0));
      await store.create('/teamsx/t9', noted('t9', true));
      await store.delete('/teams/t2');
      // History: t4 held it and no longer does; t5 did not and now does.
      await store.guaranteedUpdate<Obj>('/teams/t4', undefined, (c) => ({ ...c, spec: { n: 1, note: 'plain' } }));
      await store.guaranteedUpdate<Obj>('/teams/t5', undefined, (c) => ({ ...c, spec: { n: 1, note } }));
      const names: string[] = [];
      for await (const o of store.scan<Obj>('/teams/', { text }, 2)) names.push(o.metadata.name!);
      expect(names).toEqual(['t0', 't5', 't6']);
      // A near miss (the text cut short of a character it needs) holds nothing; '' holds every row.
      const none: string[] = [];
      for await (const o of store.scan<Obj>('/teams/', { text: `${text}x` }, 2)) none.push(o.metadata.name!);
      expect(none).toEqual([]);
      let all = 0;
      for await (const _ of store.scan<Obj>('/teams/', { text: '' }, 2)) all++;
      expect(all).toBe(6);
      // The backend itself answers with the holding rows only, its limit counting those: a page of
      // two is two matches, not two rows of which some match.
      const backend = ((store as unknown as { backend?: LogBackend }).backend ?? (store as unknown as { inner: { backend: LogBackend } }).inner.backend) as LogBackend;
      const rows = await backend.list('/teams/', '/teams0', '', await store.currentRevision(), 2, text);
      expect(rows.map((r) => r.key)).toEqual(['/teams/t0', '/teams/t5']);
      const rest = await backend.list('/teams/', '/teams0', '/teams/t5', await store.currentRevision(), 2, text);
      expect(rest.map((r) => r.key)).toEqual(['/teams/t6']);
    });

    it('compacts history: current objects stay, old revisions expire', async () => {
      await store.create('/teams/a', obj('a', 1));
      const old = await store.currentRevision();
      await store.guaranteedUpdate<Obj>('/teams/a', undefined, (c) => ({ ...c, spec: { n: 2 } }));
      await store.create('/teams/b', obj('b'));
      await store.delete('/teams/b');
      await store.compact(await store.currentRevision());
      expect(await store.compactedRevision()).toBe(await store.currentRevision());
      expect((await store.get<Obj>('/teams/a')).spec?.n).toBe(2);
      expect((await store.list<Obj>('/teams/')).items.map((i) => i.metadata.name)).toEqual(['a']);
      await expectStorageError(store.list('/teams/', { revision: old }), 'Expired');
      const w = store.watch('/teams/', old);
      await expect(collect(w, 1)).rejects.toSatisfy((e: unknown) => isStorageError(e, 'Expired'));
      // New writes after compaction get later revisions and are watchable.
      const from = await store.currentRevision();
      const w2 = store.watch<Obj>('/teams/', from);
      await store.create('/teams/c', obj('c'));
      const events = await collect(w2, 1);
      expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'c']]);
    });

    it('watch delivers every event after the start revision in revision order, with prefix filtering', async () => {
      const start = await store.currentRevision();
      const w = store.watch<Obj>('/teams/', start);
      await store.create('/teams/a', obj('a', 1));
      await store.create('/ownedaccesskeys/k', obj('k'));
      await store.guaranteedUpdate<Obj>('/teams/a', undefined, (c) => ({ ...c, spec: { n: 2 } }));
      await store.create('/teams/b', obj('b'));
      await store.delete('/teams/a');
      const events = await collect(w, 4);
      expect(events.map((e) => [e.type, e.object.metadata.name, e.object.spec?.n])).toEqual([
        ['ADDED', 'a', 1],
        ['MODIFIED', 'a', 2],
        ['ADDED', 'b', 0],
        ['DELETED', 'a', 2],
      ]);
      const revisions = events.map((e) => e.revision);
      expect([...revisions].sort((x, y) => x - y)).toEqual(revisions);
      for (const e of events) expect(e.object.metadata.resourceVersion).toBe(String(e.revision));
      expect(events[1]!.prevObject?.spec?.n).toBe(1);
      expect(events[3]!.prevObject?.spec?.n).toBe(2);
    });

    it('a watch starting in the past replays history, then follows live writes', async () => {
      const start = await store.currentRevision();
      for (let i = 0; i < 30; i++) await store.create(`/teams/t${String(i).padStart(2, '0')}`, obj(`t${i}`, i));
      const w = store.watch<Obj>('/teams/', start + 10);
      await store.create('/teams/live', obj('live', 99));
      const events = await collect(w, 21);
      expect(events).toHaveLength(21);
      expect(events.slice(0, 20).map((e) => e.object.spec?.n)).toEqual(Array.from({ length: 20 }, (_, i) => i + 10));
      expect(events[20]!.object.metadata.name).toBe('live');
    });

    it('many concurrent watchers each see every event exactly once', async () => {
      const start = await store.currentRevision();
      const watchers = Array.from({ length: 20 }, () => store.watch<Obj>('/teams/', start));
      const writes = (async () => {
        for (let i = 0; i < 15; i++) await store.create(`/teams/w${i}`, obj(`w${i}`, i));
      })();
      const all = await Promise.all(watchers.map((w) => collect(w, 15)));
      await writes;
      for (const events of all) expect(events.map((e) => e.object.spec?.n)).toEqual(Array.from({ length: 15 }, (_, i) => i));
    });

    it('finds live objects by their secondary index value, following updates and deletes', async () => {
      store.setIndexer((key, o) => (key.startsWith('/teams/') ? (o as Obj).spec?.note : undefined));
      await store.create('/teams/a', { ...obj('a'), spec: { note: 'red' } });
      await store.create('/teams/c', { ...obj('c'), spec: { note: 'blue' } });
      await store.create('/ownedaccesskeys/k', { ...obj('k'), spec: { note: 'red' } });
      const names = async (v: string) => (await store.getByIndex<Obj>('/teams/', v)).map((o) => o.metadata.name);
      expect(await names('red')).toEqual(['a']);
      await store.guaranteedUpdate<Obj>('/teams/a', undefined, (c) => ({ ...c, spec: { note: 'green' } }));
      expect(await names('red')).toEqual([]);
      expect(await names('green')).toEqual(['a']);
      await store.delete('/teams/c');
      expect(await names('blue')).toEqual([]);
      await store.compact(await store.currentRevision());
      expect(await names('green')).toEqual(['a']);
      const [found] = await store.getByIndex<Obj>('/teams/', 'green');
      expect(found).toEqual(await store.get('/teams/a'));
      expect(await names('purple')).toEqual([]);
    });

    it('index values are unique among live objects: a second holder is refused in the write itself', async () => {
      store.setIndexer((key, o) => (key.startsWith('/teams/') ? (o as Obj).spec?.note : undefined));
      await store.create('/teams/a', { ...obj('a'), spec: { note: 'red' } });
      await expect(store.create('/teams/b', { ...obj('b'), spec: { note: 'red' } })).rejects.toMatchObject({ code: 'IndexConflict' });
      await store.create('/teams/b', { ...obj('b'), spec: { note: 'blue' } });
      await expect(store.guaranteedUpdate<Obj>('/teams/b', undefined, (c) => ({ ...c, spec: { note: 'red' } }))).rejects.toMatchObject({ code: 'IndexConflict' });
      // Concurrent creates with one value: exactly one wins.
      const racers = await Promise.allSettled(['x', 'y', 'z'].map((n) => store.create(`/teams/${n}`, { ...obj(n), spec: { note: 'green' } })));
      expect(racers.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      // A value is free again once its holder changes or goes.
      await store.delete('/teams/a');
      await store.guaranteedUpdate<Obj>('/teams/b', undefined, (c) => ({ ...c, spec: { note: 'red' } }));
      expect((await store.getByIndex<Obj>('/teams/', 'red')).map((o) => o.metadata.name)).toEqual(['b']);
    });

    it('an object may carry two index values: found by either, both claimed unique, released as they change', async () => {
      // Like an access key during a rotation's overlap: its current value's hash and its previous one's.
      store.setIndexer((key, o) => {
        if (!key.startsWith('/ownedaccesskeys/')) return undefined;
        const note = (o as Obj).spec?.note;
        return note?.includes(',') ? note.split(',') : note;
      });
      await store.create('/ownedaccesskeys/a', { ...obj('a'), spec: { note: 'red' } });
      await store.create('/ownedaccesskeys/b', { ...obj('b'), spec: { note: 'blue' } });
      const names = async (v: string) => (await store.getByIndex<Obj>('/ownedaccesskeys/', v)).map((o) => o.metadata.name);
      // a rotates: green is current, red previous.
      await store.guaranteedUpdate<Obj>('/ownedaccesskeys/a', undefined, (c) => ({ ...c, spec: { note: 'green,red' } }));
      expect(await names('green')).toEqual(['a']);
      expect(await names('red')).toEqual(['a']);
      const [byPrevious] = await store.getByIndex<Obj>('/ownedaccesskeys/', 'red');
      expect(byPrevious).toEqual(await store.get('/ownedaccesskeys/a'));
      // Neither value may be taken by another key, by create or update.
      await expect(store.create('/ownedaccesskeys/c', { ...obj('c'), spec: { note: 'red' } })).rejects.toMatchObject({ code: 'IndexConflict' });
      await expect(store.create('/ownedaccesskeys/c', { ...obj('c'), spec: { note: 'pink,green' } })).rejects.toMatchObject({ code: 'IndexConflict' });
      await expect(store.guaranteedUpdate<Obj>('/ownedaccesskeys/b', undefined, (c) => ({ ...c, spec: { note: 'blue,red' } }))).rejects.toMatchObject({ code: 'IndexConflict' });
      // Nor may another key hold, as its previous value, one already taken.
      await expect(store.guaranteedUpdate<Obj>('/ownedaccesskeys/b', undefined, (c) => ({ ...c, spec: { note: 'white,green' } }))).rejects.toMatchObject({ code: 'IndexConflict' });
      expect(await names('blue')).toEqual(['b']);
      // The previous value dropped (a second rotation): red is free, green and the new one found.
      await store.guaranteedUpdate<Obj>('/ownedaccesskeys/a', undefined, (c) => ({ ...c, spec: { note: 'yellow,green' } }));
      expect(await names('red')).toEqual([]);
      expect(await names('yellow')).toEqual(['a']);
      expect(await names('green')).toEqual(['a']);
      await store.create('/ownedaccesskeys/c', { ...obj('c'), spec: { note: 'red' } });
      expect(await names('red')).toEqual(['c']);
      await store.compact(await store.currentRevision());
      expect(await names('green')).toEqual(['a']);
      // Deleted, both are free.
      await store.delete('/ownedaccesskeys/a');
      expect(await names('yellow')).toEqual([]);
      expect(await names('green')).toEqual([]);
      await store.guaranteedUpdate<Obj>('/ownedaccesskeys/b', undefined, (c) => ({ ...c, spec: { note: 'green,yellow' } }));
      expect(await names('yellow')).toEqual(['b']);
    });

    it('scrubHistory removes a property from every revision but the live one, keeping the events', async () => {
      const start = await store.currentRevision();
      await store.create('/teams/s', { ...obj('s'), secret: 'one' });
      await store.guaranteedUpdate<Obj & { secret?: string }>('/teams/s', undefined, (c) => ({ ...c, secret: 'two' }));
      await store.create('/teams/gone', { ...obj('gone'), secret: 'three' });
      await store.delete('/teams/gone');
      await store.scrubHistory('/teams/s', 'secret');
      await store.scrubHistory('/teams/gone', 'secret');
      const w = store.watch<Obj & { secret?: string }>('/teams/', start);
      const events: { type: string; secret?: string }[] = [];
      for await (const e of w) {
        events.push({ type: e.type, ...(e.object.secret ? { secret: e.object.secret } : {}) });
        if (events.length === 4) w.stop();
      }
      expect(events).toEqual([{ type: 'ADDED' }, { type: 'MODIFIED', secret: 'two' }, { type: 'ADDED' }, { type: 'DELETED' }]);
      expect(((await store.get('/teams/s')) as { secret?: string }).secret).toBe('two');
    });

    it('stop() ends a watch that is waiting for events', async () => {
      const w = store.watch('/teams/', await store.currentRevision());
      setTimeout(() => w.stop(), 20);
      const events: unknown[] = [];
      for await (const e of w) events.push(e);
      expect(events).toEqual([]);
    });

    if (opts.sharedHandles) it('a second handle on the same data sees writes and watch events of the first', async () => {
      const other = fx.reopen!();
      try {
        const start = await store.currentRevision();
        const w = other.watch<Obj>('/teams/', start);
        await store.create('/teams/shared', obj('shared', 1));
        expect((await other.get<Obj>('/teams/shared')).spec?.n).toBe(1);
        await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? store : other).guaranteedUpdate<Obj>('/teams/shared', undefined, (c) => ({
              ...c,
              spec: { n: (c.spec?.n ?? 0) + 1 },
            })),
          ),
        );
        expect((await store.get<Obj>('/teams/shared')).spec?.n).toBe(11);
        const events = await collect(w, 11);
        expect(events.map((e) => e.object.spec?.n)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
      } finally {
        await other.close();
      }
    });
  });
}
