/**
 * LIST bodies kept by revision (registry/page-bodies.ts): a page asked again before anything
 * changed is the same bytes, a write makes the next ask splice afresh, a reader with a filter or a
 * selector never gets a kept page, and what is kept stays within its bounds.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import type { ListOptions } from '../../src/registry/list.js';
import { PageBodies } from '../../src/registry/page-bodies.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
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

  const ordinary = async (opts: ListOptions) => `${JSON.stringify(await registry.teams.list(opts))}\n`;

  it('over random writes and pages, every body is the ordinary path\'s, and one asked again unchanged is the same bytes', async () => {
    type Op = { do: 'create' | 'patch' | 'delete'; n: number } | { do: 'list'; limit: number; page: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ do: fc.constantFrom('create' as const, 'patch' as const, 'delete' as const), n: fc.nat(11) }),
      fc.record({ do: fc.constant('list' as const), limit: fc.constantFrom(0, 1, 3, 5), page: fc.nat(3) }),
    );
    let hits = 0;
    let writesSeen = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        let patches = 0;
        for (const o of ops) {
          if (o.do === 'list') {
            // Walk to the asked page, then ask for it twice.
            let opts: ListOptions = o.limit ? { limit: o.limit } : {};
            for (let p = 0; p < o.page && o.limit; p++) {
              const next = (await registry.teams.list(opts)).metadata.continue;
              if (!next) break;
              opts = { limit: o.limit, continue: next };
            }
            const first = await registry.teams.listJson(opts, true);
            expect(first?.toString()).toBe(await ordinary(opts));
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
          expect((await registry.teams.listJson({}, true))?.toString()).toBe(await ordinary({}));
        }
        for (const t of (await registry.teams.list({})).items) await registry.teams.delete(t.metadata.name!);
      }),
      { numRuns: 40, seed },
    );
    expect(hits).toBeGreaterThan(20);
    expect(writesSeen).toBeGreaterThan(20);
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

  it('keeps at most 8 bodies, the least recently asked leaving first', () => {
    const pages = new PageBodies();
    for (let i = 0; i < 8; i++) pages.set(PageBodies.key(1, `k${i}`, 10), body(1));
    expect(pages.get(PageBodies.key(1, 'k0', 10))).toBeDefined(); // k0 is now the most recent
    pages.set(PageBodies.key(1, 'k8', 10), body(1));
    expect(pages.size).toEqual({ bodies: 8, bytes: 8 * 1024 });
    expect(pages.get(PageBodies.key(1, 'k1', 10))).toBeUndefined();
    expect(pages.get(PageBodies.key(1, 'k0', 10))).toBeDefined();
  });

  it('keeps at most 8 MiB, and never a body over 2 MiB', () => {
    const pages = new PageBodies();
    pages.set('big', body(2 * 1024 + 1));
    expect(pages.size).toEqual({ bodies: 0, bytes: 0 });
    for (let i = 0; i < 5; i++) pages.set(`p${i}`, body(2 * 1024));
    expect(pages.size).toEqual({ bodies: 4, bytes: 8 * 1024 * 1024 });
    expect(pages.get('p0')).toBeUndefined();
    expect(pages.get('p4')).toBeDefined();
  });

  it('the key tells revision, limit and start apart', () => {
    const keys = [PageBodies.key(1, '', 10), PageBodies.key(2, '', 10), PageBodies.key(1, '', 1), PageBodies.key(1, '/teams/a', 10), PageBodies.key(11, '', 0), PageBodies.key(1, '1\u00000', 0)];
    expect(new Set(keys).size).toBe(keys.length);
  });
});
