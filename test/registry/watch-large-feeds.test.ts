/**
 * The two long feeds of a registry watch go out as the reader takes them, whatever their length:
 * the initial list of a watch without a resourceVersion, and the history of a watch from a
 * resourceVersion far back. A reader that has not read yet is no reader falling behind: it gets
 * every object, no 410. (watch-overflow.test.ts: changes made after the start still overflow.)
 * Objects are written straight to the store, once for both tests: 10,001 of them, more than a
 * watch's queue holds.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Status } from '../../src/api/errors.js';
import type { KubeObject, WatchEvent } from '../../src/api/types.js';
import type { Registry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import type { StoreEvent, StoredObject, StoreWatch } from '../../src/store/types.js';
import { eventually } from '../support/eventually.js';
import { newRegistry, team } from './helpers.js';

const many = 10_001;

/** A store that counts the events its watches have handed to their reader (the registry watch). */
class TakenStore extends MemoryStore {
  taken = 0;
  override watch<T extends StoredObject>(prefix: string, fromRevision: number): StoreWatch<T> {
    const sw = super.watch<T>(prefix, fromRevision);
    const iterate = sw[Symbol.asyncIterator].bind(sw);
    sw[Symbol.asyncIterator] = (): AsyncIterator<StoreEvent<T>> => {
      const inner = iterate();
      return {
        next: async () => {
          const r = await inner.next();
          if (!r.done) this.taken++;
          return r;
        },
      };
    };
    return sw;
  }
}

/** The names of the first n events, then the watch is stopped; throws if it ends (or fails) before. */
async function names(w: AsyncIterable<WatchEvent<KubeObject | Status>> & { stop(): void }, n: number): Promise<string[]> {
  const out: string[] = [];
  for await (const e of w) {
    expect(e.type).toBe('ADDED');
    out.push((e.object as KubeObject).metadata.name!);
    if (out.length === n) break;
  }
  w.stop();
  return out;
}

describe('watch: long feeds go out as the reader takes them', () => {
  let registry: Registry;
  let store: TakenStore;
  let before: string;
  const written = Array.from({ length: many }, (_, i) => `t${String(i).padStart(5, '0')}`);
  beforeAll(async () => {
    store = new TakenStore();
    ({ registry } = newRegistry({ store }));
    await registry.teams.create(team('seed')); // so the history starts after a revision that is not "0", which would list instead
    before = String(await store.currentRevision());
    for (const name of written) {
      await store.create(`/teams/${name}`, { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name, uid: `u-${name}` }, spec: {} });
    }
  });

  it('the initial list, longer than the queue holds, reaches a reader that starts reading only after the start', async () => {
    const w = registry.teams.watch();
    await w.started;
    await new Promise((r) => setImmediate(r));
    expect(await names(w, many + 1)).toEqual(['seed', ...written]);
  });

  it('the history from a resourceVersion far back waits for the reader, then reaches it whole and in order', async () => {
    store.taken = 0;
    const w = registry.teams.watch({ resourceVersion: before });
    await w.started;
    // Until the watch stops taking events from the store: it waits for the reader once about 1,000 are queued.
    let seen = -1;
    await eventually('the watch stops taking history', () => {
      const still = store.taken > 0 && store.taken === seen;
      seen = store.taken;
      return still;
    }, { intervalMs: 20 });
    // It read ahead the batch (1,000 queued) and the one event it holds until the reader takes half: no more, no less.
    expect(store.taken).toBe(1_001);
    expect(await names(w, many)).toEqual(written);
  });
});
