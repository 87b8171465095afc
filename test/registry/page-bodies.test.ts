/**
 * LIST bodies kept by revision (registry/page-bodies.ts): a page asked again before anything
 * changed is the same bytes, a write makes the next ask splice afresh, so does a refill of the
 * cache over a store whose revisions went back, a reader with a filter or a selector never gets a
 * kept page, and what is kept stays within its bounds.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import type { ListOptions } from '../../src/registry/list.js';
import { PageBodies } from '../../src/registry/page-bodies.js';
import { accessKeyIndexer } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore, type CacheableStore } from '../../src/store/cache/cached-store.js';
import { newRegistry, team } from './helpers.js';

const seed = Number(process.env.PAGE_BODIES_SEED ?? 20261129);

describe('LIST bodies kept by revision', () => {
  let store: CachedStore;
  let registry: ReturnType<typeof newRegistry>['registry'];
  beforeEach(async () => {
    store = new CachedStore(new MemoryStore()).start();
    ({ registry } = newRegistry({ store }));
    expect(await store.ready()).toBe(true);
  });
  afterEach(() => store.close());

  /**
   * The ordinary path's body for these options, with kube's remainingItemCount that only the
   * spliced path counts (lists without selectors, when more follow), taken from the spliced body.
   */
  async function ordinary(opts: ListOptions, spliced?: Buffer): Promise<string> {
    const list = await registry.teams.list(opts);
    const remainingItemCount = spliced ? (JSON.parse(spliced.toString()) as { metadata: { remainingItemCount?: number } }).metadata.remainingItemCount : undefined;
    if (list.metadata.continue !== undefined) expect(remainingItemCount).toBeGreaterThan(0);
    const counted = remainingItemCount === undefined ? list : { ...list, metadata: { ...list.metadata, remainingItemCount } };
    return `${JSON.stringify(counted)}\n`;
  }

  it('over random writes and pages, every body is the ordinary path\'s, and one asked again unchanged is the same bytes', async () => {
    type Op = { do: 'create' | 'patch' | 'delete'; n: number } | { do: 'list'; limit: number; page: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ do: fc.constantFrom('create' as const, 'patch' as const, 'delete' as const), n: fc.nat(11) }),
      fc.record({ do: fc.constant('list' as const), limit: fc.constantFrom(0, 1, 3, 5), page: fc.nat(3) }),
    );
    let hits = 0;
    let continued = 0;
    let writesSeen = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        let patches = 0;
        // Enough objects that pages of 1, 3 and 5 have pages after them.
        for (let i = 0; i < 8; i++) await registry.teams.create(team(`t${i}`));
        for (const o of ops) {
          if (o.do === 'list') {
            // Walk to the asked page, then ask for it twice.
            let opts: ListOptions = o.limit ? { limit: o.limit } : {};
            for (let p = 0; p < o.page && o.limit; p++) {
              const next = (await registry.teams.list(opts)).metadata.continue;
              if (!next) break;
              opts = { limit: o.limit, continue: next };
            }
            if (opts.continue) continued++;
            const first = await registry.teams.listJson(opts, true);
            expect(first?.toString()).toBe(await ordinary(opts, first));
            const again = await registry.teams.listJson(opts, true);
            // Kept: the very same memory, not a second splice.
            expect(again).toBe(first);
            hits++;
            continue;
          }
          const name = `t${o.n}`;
          if (o.do === 'create') await registry.teams.create(team(name)).catch(() => undefined);
          else if (o.do === 'patch') await registry.teams.patch(name, 'merge', { spec: { displayName: `v${patches++}` } }).catch(() => undefined);
          else await registry.teams.delete(name).catch(() => undefined);
          writesSeen++;
          // After any write (or a refused one), a fresh ask still equals the ordinary path.
          const whole = await registry.teams.listJson({}, true);
          expect(whole?.toString()).toBe(await ordinary({}, whole));
        }
        for (const t of (await registry.teams.list({})).items) await registry.teams.delete(t.metadata.name!);
      }),
      { numRuns: 40, seed },
    );
    expect(hits).toBeGreaterThan(100);
    expect(continued).toBeGreaterThan(30);
    expect(writesSeen).toBeGreaterThan(100);
  });

  it('a write between two asks gives the second its own bytes, with the write in them', async () => {
    await registry.teams.create(team('a'));
    const before = await registry.teams.listJson({}, true);
    await registry.teams.patch('a', 'merge', { spec: { displayName: 'After' } });
    const after = await registry.teams.listJson({}, true);
    expect(after).not.toBe(before);
    expect(JSON.parse(after!.toString()).items[0].spec.displayName).toBe('After');
    expect(after!.toString()).toBe(await ordinary({}));
  });

  it('a refill of the cache over a store whose revisions went back (a restore, a failover) gives the new state, not the body kept at that number', async () => {
    let current = new MemoryStore();
    const inner = new Proxy({} as CacheableStore, {
      get: (_t, p) => {
        const v = (current as unknown as Record<PropertyKey, unknown>)[p];
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(current) : v;
      },
    });
    const rewound = new CachedStore(inner, { retryMs: 10 }).start();
    const { registry: r } = newRegistry({ store: rewound });
    try {
      expect(await rewound.ready()).toBe(true);
      await r.teams.create(team('a'));
      await r.teams.create(team('b'));
      const before = await r.teams.listJson({}, true);
      expect(JSON.parse(before!.toString()).items.map((t: KubeObject) => t.metadata.name)).toEqual(['a', 'b']);
      // Another store under the cache, at the same revision numbers with other objects; the cache fills again.
      current = new MemoryStore();
      await r.teams.create(team('x'));
      await r.teams.create(team('y'));
      rewound.setIndexer(accessKeyIndexer);
      expect(await rewound.ready()).toBe(true);
      const after = await r.teams.listJson({}, true);
      expect(JSON.parse(after!.toString()).metadata.resourceVersion).toBe(JSON.parse(before!.toString()).metadata.resourceVersion);
      expect(after!.toString()).toBe(`${JSON.stringify(await r.teams.list({}))}\n`);
    } finally {
      await rewound.close();
    }
  });

  it('a reader with a filter or a selector is never given the page kept for one who sees everything', async () => {
    await registry.teams.create(team('gold', {}, { labels: { tier: 'gold' } }));
    await registry.teams.create(team('iron', {}, { labels: { tier: 'iron' } }));
    const all = await registry.teams.listJson({}, true);
    expect(JSON.parse(all!.toString()).items).toHaveLength(2);
    const onlyGold = (o: KubeObject) => o.metadata.labels?.tier === 'gold';
    for (const [opts, seesAll] of [
      [{ filter: onlyGold }, false],
      [{ labelSelector: 'tier=gold' }, true],
    ] as const) {
      const body = await registry.teams.listJson(opts, seesAll);
      expect(JSON.parse(body!.toString()).items.map((t: KubeObject) => t.metadata.name)).toEqual(['gold']);
      expect(await registry.teams.listJson(opts, seesAll)).not.toBe(body);
    }
  });
});

describe('PageBodies bounds', () => {
  const body = (kib: number) => Buffer.alloc(kib * 1024, 0x61);
  const fill = {};

  it('keeps at most 8 bodies, the least recently asked leaving first', () => {
    const pages = new PageBodies();
    for (let i = 0; i < 8; i++) pages.set(fill, 1, `k${i}`, 10, body(1));
    expect(pages.get(fill, 1, 'k0', 10)).toBeDefined(); // k0 is now the most recent
    pages.set(fill, 1, 'k8', 10, body(1));
    expect(pages.size).toEqual({ bodies: 8, bytes: 8 * 1024 });
    expect(pages.get(fill, 1, 'k1', 10)).toBeUndefined();
    expect(pages.get(fill, 1, 'k0', 10)).toBeDefined();
  });

  it('keeps at most 8 MiB, and never a body over 2 MiB', () => {
    const pages = new PageBodies();
    pages.set(fill, 1, 'big', 10, body(2 * 1024 + 1));
    expect(pages.size).toEqual({ bodies: 0, bytes: 0 });
    for (let i = 0; i < 5; i++) pages.set(fill, 1, `p${i}`, 10, body(2 * 1024));
    expect(pages.size).toEqual({ bodies: 4, bytes: 8 * 1024 * 1024 });
    expect(pages.get(fill, 1, 'p0', 10)).toBeUndefined();
    expect(pages.get(fill, 1, 'p4', 10)).toBeDefined();
  });

  it('keeps the bodies of one fill and revision: another revision or another fill drops them all', () => {
    const pages = new PageBodies();
    pages.set(fill, 1, '', 10, body(1));
    pages.set(fill, 1, '/teams/a', 10, body(1));
    expect(pages.get(fill, 1, '', 1)).toBeUndefined();
    expect(pages.get(fill, 1, '/teams/b', 10)).toBeUndefined();
    expect(pages.get(fill, 2, '', 10)).toBeUndefined();
    expect(pages.size).toEqual({ bodies: 0, bytes: 0 });
    pages.set(fill, 2, '', 10, body(1));
    expect(pages.get({}, 2, '', 10)).toBeUndefined();
    expect(pages.size).toEqual({ bodies: 0, bytes: 0 });
  });
});
