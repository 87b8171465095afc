/**
 * The keys-per-holder quota under a burst of parallel writes (server/key-quota.ts): on one server it
 * is exact. Before, every create of a burst read the same count and all passed at the last free
 * place. Each write holds its place until it has settled, so a failed or dry-run write gives the
 * place back, and a later one gets it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { createRegistry } from '../../src/registry/registry.js';
import { keyQuota, quotaDenial } from '../../src/server/key-quota.js';
import { Holds } from '../../src/server/admission/chain.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const max = 3;
const burst = 20;

describe('the key quota under a burst of parallel writes', () => {
  let server: InProcess;
  beforeAll(async () => {
    server = await startInProcess({ maxKeysPerUser: max });
  });
  afterAll(() => server.close());

  const keysOf = async (user: string) => {
    const res = await server.fetch(`${server.api}/ownedaccesskeys`);
    const { items } = (await res.json()) as { items: { metadata: { name: string }; spec: { user?: string } }[] };
    return items.filter((k) => k.spec.user === user).map((k) => k.metadata.name);
  };
  const create = (name: string, spec: Record<string, unknown>, query = '') =>
    server.fetch(`${server.api}/ownedaccesskeys${query}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name }, spec }) });
  const statuses = async (responses: Response[]) => {
    const out: { code: number; reason?: string; message?: string }[] = [];
    for (const r of responses) out.push({ code: r.status, ...((r.status === 201 ? {} : await r.json()) as { reason?: string; message?: string }) });
    return out;
  };

  it(`${burst} creates at once for a holder with one free place: one is created, the rest are 403 exceeded quota, and the holder has ${max} keys`, async () => {
    for (let i = 0; i < max - 1; i++) expect((await create(`before-${i}`, { user: 'burst' })).status).toBe(201);
    const results = await statuses(await Promise.all(Array.from({ length: burst }, (_, i) => create(`burst-${i}`, { user: 'burst' }))));
    expect(results.filter((r) => r.code === 201)).toHaveLength(1);
    const refused = results.filter((r) => r.code !== 201);
    expect(refused).toHaveLength(burst - 1);
    for (const r of refused) {
      expect(r.code).toBe(403);
      expect(r.reason).toBe('Forbidden');
      // Refused for the keys stored and those admitted (or being judged) before it, never more than the bound stored.
      const m = r.message!.match(/exceeded quota: "burst" already has (\d+) access keys(?: and (\d+) more being written)?, the most allowed \(--max-keys-per-user 3\)$/);
      expect(m, r.message).not.toBeNull();
      const [stored, writing] = [Number(m![1]), Number(m![2] ?? 0)];
      expect(stored).toBeLessThanOrEqual(max);
      expect(stored + writing).toBeGreaterThanOrEqual(max);
    }
    expect(await keysOf('burst')).toHaveLength(max);
  });

  it('a burst for a holder with no key: exactly the bound is created', async () => {
    const results = await statuses(await Promise.all(Array.from({ length: burst }, (_, i) => create(`fresh-${i}`, { user: 'fresh' }))));
    expect(results.filter((r) => r.code === 201)).toHaveLength(max);
    expect(results.filter((r) => r.code === 403)).toHaveLength(burst - max);
    expect(await keysOf('fresh')).toHaveLength(max);
  });

  it('writes that fail after admission, or are dry runs, give their places back: the last free place is still there', async () => {
    for (let i = 0; i < max - 1; i++) expect((await create(`edge-${i}`, { user: 'edge' })).status).toBe(201);
    // A value already in use fails the create after admission (422), holding the place until then.
    const taken = 'x'.repeat(64);
    expect((await create('edge-holder-of-value', { user: 'other', key: taken })).status).toBe(201);
    const failing = await Promise.all(Array.from({ length: 8 }, (_, i) => create(`edge-fail-${i}`, { user: 'edge', key: taken })));
    expect(failing.every((r) => r.status === 422 || r.status === 403)).toBe(true);
    expect(failing.some((r) => r.status === 422)).toBe(true);
    // Dry runs hold no place: a burst of them is judged as one would be.
    const dry = await Promise.all(Array.from({ length: 8 }, (_, i) => create(`edge-dry-${i}`, { user: 'edge' }, '?dryRun=All')));
    expect(dry.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect((await create('edge-last', { user: 'edge' })).status).toBe(201);
    expect((await create('edge-past', { user: 'edge' })).status).toBe(403);
    expect(await keysOf('edge')).toHaveLength(max);
  });

  it('moving keys to one holder in parallel (PATCH spec.user) is held to the bound as creates are', async () => {
    for (let i = 0; i < 6; i++) expect((await create(`mover-${i}`, { user: `mover-from-${i}` })).status).toBe(201);
    const moves = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        server.fetch(`${server.api}/ownedaccesskeys/mover-${i}`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { user: 'mover' } }) }),
      ),
    );
    expect(moves.filter((r) => r.status === 200)).toHaveLength(max);
    expect(moves.filter((r) => r.status === 403)).toHaveLength(6 - max);
    expect(await keysOf('mover')).toHaveLength(max);
  });
});

describe('the key quota over generated interleavings of parallel writers (server/key-quota.ts)', () => {
  const tick = () => new Promise<void>((r) => setImmediate(r));
  const ticks = async (n: number) => {
    for (let i = 0; i < n; i++) await tick();
  };

  it('never stores more keys than the bound for a holder, and refuses none while a place is free (no write fails)', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 4 }),
        // Per writer: ticks before it starts, inside the index read (before, after), before its write, before it settles.
        fc.array(fc.tuple(fc.nat(6), fc.nat(6), fc.nat(6), fc.nat(6), fc.nat(6)), { minLength: 1, maxLength: 8 }),
        async (max, initial, writers) => {
          const store = new CachedStore(new MemoryStore()).start();
          const registry = createRegistry(store);
          const keys = registry.ownedaccesskeys;
          const holder = `h${round++}`;
          for (let i = 0; i < initial; i++) await keys.create({ metadata: { name: `${holder}-old-${i}` }, spec: { user: holder } }, { fieldManager: 't' });
          // The real registry answers the index reads; each writer's read is slowed by its own ticks.
          const delays: [number, number][] = [];
          let current = 0;
          const slowed = new Proxy(keys, {
            get(target, prop, receiver) {
              if (prop !== 'byField') return Reflect.get(target, prop, receiver);
              return async (index: 'holder', value: string) => {
                const [before, after] = delays[current] ?? [0, 0];
                await ticks(before);
                const found = await target.byField(index, value);
                await ticks(after);
                return found;
              };
            },
          });
          const quota = keyQuota(slowed, max);
          const outcomes = await Promise.all(
            writers.map(async ([start, inBefore, inAfter, beforeWrite, beforeSettle], i) => {
              await ticks(start);
              const holds = new Holds();
              const name = `${holder}-new-${i}`;
              return holds.around(async () => {
                let refused = false;
                // Judged inside the registry's create, as the server's admission is: on the object with its uid.
                await keys
                  .create(
                    { metadata: { name }, spec: { user: holder } },
                    {
                      fieldManager: 't',
                      admit: async (write) => {
                        delays[i] = [inBefore, inAfter];
                        current = i; // read synchronously by the index read quotaDenial starts next
                        if (await quotaDenial(quota, write.old, write.object!, undefined, holds.hold)) throw new Error('refused');
                        await ticks(beforeWrite);
                      },
                    },
                  )
                  .catch((err: Error) => {
                    if (err.message !== 'refused') throw err;
                    refused = true;
                  });
                if (refused) return 'refused';
                await ticks(beforeSettle);
                return 'created';
              });
            }),
          );
          const stored = (await keys.byField('holder', holder)).length;
          await store.close();
          expect(stored).toBeLessThanOrEqual(Math.max(max, initial));
          // Nothing failed, so every place counted against a writer became a key: none refused while one was free.
          expect(stored).toBe(Math.max(initial, Math.min(max, initial + writers.length)));
          expect(outcomes.filter((o) => o === 'created')).toHaveLength(stored - initial);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('what a count of places counts (server/key-quota.ts)', () => {
  // The stored keys a count reads are given here, so that each case sets exactly the moment it is about.
  const stored = (...keys: [string, string][]) => ({ byField: async () => keys.map(([name, uid]) => ({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name, uid }, spec: { user: 'h' } })) });
  const key = (name: string, uid: string) => ({ metadata: { name, uid }, spec: { user: 'h' } }) as never;

  it('a key stored under another name than its place was admitted with (a generated name retried) counts once, by uid', async () => {
    const quota = keyQuota(stored(['x-bbbbb', 'uid-1']), 2);
    quota.reserve('h', 'uid-1'); // admitted as x-aaaaa, stored as x-bbbbb
    const second = quota.reserve('h', 'uid-2');
    expect(await quota.count('h', [], second.before, 'uid-2')).toEqual({ stored: 1, writing: 0 });
  });

  it.each([
    ['was refused by admission counts no more, even for a write that read it while it was held', true, { stored: 0, writing: 0 }],
    ['settled (it may have committed) still counts until the count finds its key stored', false, { stored: 0, writing: 1 }],
  ] as const)('a place whose write %s', async (_, refused, counted) => {
    const quota = keyQuota(stored(), 1);
    const first = quota.reserve('h', 'uid-1');
    const second = quota.reserve('h', 'uid-2');
    first.release(refused);
    expect(await quota.count('h', [], second.before, 'uid-2')).toEqual(counted);
  });

  it("a sign-in's place that replaces a stored Login key stands for it: the two count once", async () => {
    const quota = keyQuota(stored(['old-login', 'uid-old']), 2);
    quota.reserve('h', 'uid-new-login', 'old-login');
    const holds = new Holds();
    expect(await quotaDenial(quota, undefined, key('ci', 'uid-ci'), undefined, holds.hold)).toBeUndefined();
  });

  it("a new key under the name of one of the holder's stored keys (a generated name that collided) counts that key", async () => {
    const quota = keyQuota(stored(['h-aaaaa', 'uid-a'], ['h-bbbbb', 'uid-b']), 2);
    expect(await quotaDenial(quota, undefined, key('h-aaaaa', 'uid-new'))).toBe('exceeded quota: "h" already has 2 access keys, the most allowed (--max-keys-per-user 2)');
  });

  it('a move of a key that a move in parallel already gave this holder does not count the key against itself', async () => {
    const quota = keyQuota(stored(['other', 'uid-o'], ['k', 'uid-k']), 2);
    const from = { metadata: { name: 'k', uid: 'uid-k' }, spec: { user: 'elsewhere' } } as never;
    expect(await quotaDenial(quota, from, key('k', 'uid-k'))).toBeUndefined();
  });

  it('a write refused by admission gives its place back as failed; one that fails after it was admitted (it may have committed) as stored', async () => {
    const quota = keyQuota(stored(), 1);
    // Refused by a plugin after the quota: nothing was written, the place counts no more, even for a
    // write that read it while it was held.
    const refusedWrite = new Holds();
    let early: Awaited<ReturnType<typeof quota.reserve>> | undefined;
    await expect(
      refusedWrite.around(() =>
        refusedWrite.judged(async () => {
          expect(await quotaDenial(quota, undefined, key('a', 'uid-a'), undefined, refusedWrite.hold)).toBeUndefined();
          early = quota.reserve('h', 'uid-e');
          throw new Error('refused by a later plugin');
        }),
      ),
    ).rejects.toThrow('refused by a later plugin');
    expect(await quota.count('h', [], early!.before, 'uid-e')).toEqual({ stored: 0, writing: 0 });
    early!.release(true);
    // Admitted, then its store call failed without saying whether it committed (a lost answer to COMMIT).
    const lostWrite = new Holds();
    let reader: Awaited<ReturnType<typeof quota.reserve>> | undefined;
    await expect(
      lostWrite.around(async () => {
        await lostWrite.judged(async () => {
          expect(await quotaDenial(quota, undefined, key('b', 'uid-b'), undefined, lostWrite.hold)).toBeUndefined();
        });
        reader = quota.reserve('h', 'uid-c'); // a write that reads the places while b's is held
        throw new Error('the answer to COMMIT was lost');
      }),
    ).rejects.toThrow('lost');
    expect(await quota.count('h', [], reader!.before, 'uid-c')).toEqual({ stored: 0, writing: 1 });
    expect(quota.held('h').map((p) => p.uid)).toEqual(['uid-c']);
  });

  it('a retried update does not count its own earlier place', async () => {
    const quota = keyQuota(stored(['k1', 'uid-1']), 2);
    const holds = new Holds();
    const moved = key('k2', 'uid-2');
    const from = { metadata: { name: 'k2', uid: 'uid-2' }, spec: { user: 'elsewhere' } } as never;
    expect(await quotaDenial(quota, from, moved, undefined, holds.hold)).toBeUndefined();
    expect(await quotaDenial(quota, from, moved, undefined, holds.hold)).toBeUndefined(); // guaranteedUpdate's second try
    holds.release(false);
    expect(quota.held('h')).toEqual([]);
  });
});
