/**
 * The watch cache answers exactly what the store holds: random creates, updates, deletes,
 * compactions, writes by a second process and refills, and after each step every get, every page
 * of every list (with limits, and at the list's own revision as a continue token reads it) and
 * every index lookup through the cache equals the store's answer, resourceVersions included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import type { LogStore } from '../../src/store/log/log-store.js';
import { Removal, type Indexer, type ListOptions, type Store, type StoredObject } from '../../src/store/types.js';

interface Obj extends StoredObject {
  metadata: { name: string; uid: string; resourceVersion?: string };
  spec: { n: number; idx?: string };
}

const prefixes = ['/teams/', '/ownedaccesskeys/'];
const names = ['a', 'b', 'c', 'd', 'e', 'f'];
const indexValues = ['x', 'y', 'z'];
const indexer: Indexer = (key, obj) => (key.startsWith('/ownedaccesskeys/') ? (obj as Obj).spec?.idx : undefined);

const keyArb = fc.tuple(fc.constantFrom(...prefixes), fc.constantFrom(...names)).map(([p, n]) => p + n);
const specArb = fc.record({ n: fc.nat(5), idx: fc.option(fc.constantFrom(...indexValues), { nil: undefined }) });
const opArb = fc.oneof(
  fc.record({ op: fc.constant('create' as const), key: keyArb, spec: specArb, external: fc.boolean() }),
  fc.record({ op: fc.constant('update' as const), key: keyArb, spec: specArb, external: fc.boolean() }),
  fc.record({ op: fc.constant('delete' as const), key: keyArb, external: fc.boolean() }),
  fc.record({ op: fc.constant('remove' as const), key: keyArb }),
  fc.record({ op: fc.constant('compact' as const), back: fc.nat(4) }),
  fc.record({ op: fc.constant('refill' as const) }),
);
type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never;

const make = (key: string, spec: Obj['spec']): Obj => {
  const name = key.slice(key.lastIndexOf('/') + 1);
  return { metadata: { name, uid: `uid-${name}` }, spec: spec.idx === undefined ? { n: spec.n } : spec };
};

/** The outcome of a call, an error by its storage code: what both sides must agree on. */
async function outcome<T>(call: () => Promise<T>): Promise<T | { error: string }> {
  try {
    return await call();
  } catch (err) {
    return { error: (err as { code?: string }).code ?? String(err) };
  }
}

async function apply(op: Op, cache: CachedStore, other: Store): Promise<void> {
  const via = 'external' in op && op.external ? other : cache;
  switch (op.op) {
    case 'create':
      await outcome(() => via.create(op.key, make(op.key, op.spec)));
      return;
    case 'update':
      await outcome(() => via.guaranteedUpdate<Obj>(op.key, undefined, (cur) => ({ ...cur, spec: make(op.key, op.spec).spec })));
      return;
    case 'delete':
      await outcome(() => via.delete(op.key));
      return;
    case 'remove':
      await outcome(() => cache.guaranteedUpdate<Obj>(op.key, undefined, (cur) => new Removal(cur)));
      return;
    case 'compact':
      await cache.compact((await cache.currentRevision()) - op.back);
      return;
    case 'refill':
      // Installing the indexer again makes the cache fill itself anew, reads going to the store meanwhile.
      cache.setIndexer(indexer);
      expect(await cache.ready(5000)).toBe(true);
  }
}

/** Every page of a list, `limit` at a time, each later page read at the first page's revision. */
async function pages(store: Store, prefix: string, limit: number, revision?: number) {
  const out = [];
  let opts: ListOptions = { limit, ...(revision === undefined ? {} : { revision }) };
  for (let i = 0; i < 20; i++) {
    const page = await outcome(() => store.list(prefix, opts));
    out.push(page);
    if ('error' in page || page.continueAfter === undefined) break;
    opts = { limit, after: page.continueAfter, revision: page.revision };
  }
  return out;
}

async function expectSame(cache: CachedStore, inner: Store, limit: number): Promise<void> {
  const revision = await inner.currentRevision();
  for (const prefix of prefixes) {
    // The cache itself answers (not the store behind it): it is current after every step.
    expect(await cache.cachedList(prefix, {})).toBeDefined();
    expect(await pages(cache, prefix, limit)).toEqual(await pages(inner, prefix, limit));
    expect(await pages(cache, prefix, 0, revision)).toEqual(await pages(inner, prefix, 0, revision));
    for (const name of names) expect(await outcome(() => cache.get(prefix + name))).toEqual(await outcome(() => inner.get(prefix + name)));
    for (const v of indexValues) expect(await cache.getByIndex(prefix, v)).toEqual(await inner.getByIndex(prefix, v));
  }
  const older = Math.max(0, revision - 2);
  expect(await pages(cache, '/teams/', 2, older)).toEqual(await pages(inner, '/teams/', 2, older));
}

async function play(ops: Op[], limit: number, open: () => { inner: LogStore; other: Store; cleanup: () => void }): Promise<void> {
  const { inner, other, cleanup } = open();
  const cache = new CachedStore(inner, { retryMs: 5 });
  cache.setIndexer(indexer);
  other.setIndexer(indexer);
  try {
    expect(await cache.ready(5000)).toBe(true);
    for (const op of ops) {
      await apply(op, cache, other);
      await expectSame(cache, inner, limit);
    }
  } finally {
    await other.close();
    await cache.close();
    cleanup();
  }
}

const runs = { numRuns: 60, interruptAfterTimeLimit: 8_000 };

describe('watch cache against the store it caches', () => {
  it('memory store: every read through the cache equals the store after each random step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 4 }), (ops, limit) =>
        play(ops, limit, () => {
          const inner = new MemoryStore();
          // One process: "external" writes go through the store underneath the cache.
          return { inner, other: { ...inner, setIndexer: () => {}, close: async () => {}, create: inner.create.bind(inner), guaranteedUpdate: inner.guaranteedUpdate.bind(inner), delete: inner.delete.bind(inner) } as unknown as Store, cleanup: () => {} };
        }),
      ),
      runs,
    );
  }, 20_000);

  it('SQLite store, with a second process writing to the same file: the same, resourceVersions included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 4 }), (ops, limit) =>
        play(ops, limit, () => {
          const dir = mkdtempSync(join(tmpdir(), 'teamkeys-cache-prop-'));
          const path = join(dir, 'store.db');
          // Polling slower than the test: the cache must catch up with the other handle's writes on demand.
          const inner = new SqliteStore(path, { pollIntervalMs: 60_000 });
          const other = new SqliteStore(path, { pollIntervalMs: 60_000 });
          return { inner, other, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
        }),
      ),
      runs,
    );
  }, 20_000);
});
