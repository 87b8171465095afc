/**
 * GET and LIST bodies spliced from the watch cache's per-object JSON are exactly the bodies the
 * ordinary path serializes: every page of paged lists (continue tokens included), with selectors
 * and an authorization filter, and the cases the cache must leave to the store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredApiObject } from '../../src/api/secrets.js';
import type { KubeObject } from '../../src/api/types.js';
import type { ListOptions } from '../../src/registry/list.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { accessKey, newRegistry, team } from './helpers.js';

describe('LIST and GET from the watch cache', () => {
  let store: CachedStore;
  let registry: ReturnType<typeof newRegistry>['registry'];
  beforeEach(async () => {
    store = new CachedStore(new MemoryStore()).start();
    ({ registry } = newRegistry({ store }));
    for (let i = 0; i < 23; i++) {
      await registry.teams.create(team(`t${String(i).padStart(2, '0')}`, { users: [`u${i}`] }, { labels: { tier: i % 3 === 0 ? 'gold' : 'iron' } }));
    }
    await registry.teams.delete('t05');
    await registry.teams.create(team('t99', {}, { finalizers: ['x/y'] }));
    await registry.teams.delete('t99'); // terminating: still listed, with its deletionTimestamp
    expect(await store.ready()).toBe(true);
  });
  afterEach(() => store.close());

  const odd = (o: KubeObject) => Number(o.metadata.name!.slice(1)) % 2 === 1;

  /** Every page through both paths: the spliced body equals the serialized list, token for token. */
  async function samePages(opts: ListOptions, seesAll: boolean): Promise<number> {
    let pages = 0;
    let next: string | undefined;
    do {
      const { resourceVersion: _rv, resourceVersionMatch: _m, ...rest } = opts;
      const page: ListOptions = next ? { ...rest, continue: next } : opts;
      const spliced = await registry.teams.listJson(page, seesAll);
      const ordinary = await registry.teams.list(page);
      expect(spliced).toBeDefined();
      // Only the spliced path counts what follows a page (kube's remainingItemCount, lists without selectors).
      const { remainingItemCount } = (JSON.parse(spliced!.toString()) as { metadata: { remainingItemCount?: number } }).metadata;
      const unselected = !opts.labelSelector && !opts.filter && ordinary.metadata.continue !== undefined;
      expect(remainingItemCount !== undefined).toBe(unselected);
      const counted = remainingItemCount === undefined ? ordinary : { ...ordinary, metadata: { ...ordinary.metadata, remainingItemCount } };
      // The body as sent: JSON and its newline (the response conventions then copy nothing).
      expect(spliced?.toString()).toBe(`${JSON.stringify(counted)}\n`);
      next = ordinary.metadata.continue;
      pages++;
    } while (next && pages < 50);
    return pages;
  }

  it('pages, selectors and filters give the same bytes as the ordinary path', async () => {
    for (const limit of [undefined, 1, 4, 7, 100]) {
      for (const labelSelector of [undefined, 'tier=gold', 'tier!=gold']) {
        for (const filter of [undefined, odd]) {
          const opts: ListOptions = { ...(limit ? { limit } : {}), ...(labelSelector ? { labelSelector } : {}), ...(filter ? { filter } : {}) };
          const pages = await samePages(opts, filter === undefined);
          if (limit === 1 && !labelSelector && !filter) expect(pages).toBe(23);
        }
      }
    }
    await samePages({ resourceVersion: String(await store.currentRevision()), resourceVersionMatch: 'NotOlderThan', limit: 5 }, true);
  });

  it('a continue token from before a write, an Exact older revision and a name-pinned selector are left to the store', async () => {
    const first = await registry.teams.list({ limit: 3 });
    await registry.teams.create(team('late'));
    expect(await registry.teams.listJson({ limit: 3, continue: first.metadata.continue! }, true)).toBeUndefined();
    // The store still answers the old page at the token's revision, without the later write.
    const second = await registry.teams.list({ limit: 30, continue: first.metadata.continue! });
    expect(second.items.map((t) => t.metadata.name)).not.toContain('late');
    expect(await registry.teams.listJson({ resourceVersion: first.metadata.resourceVersion!, resourceVersionMatch: 'Exact' }, true)).toBeUndefined();
    expect(await registry.teams.listJson({ fieldSelector: 'metadata.name=t01' }, true)).toBeUndefined();
  });

  it('a resourceVersion newer than the store is refused as the ordinary path refuses it', async () => {
    const rv = String((await store.currentRevision()) + 10);
    const err = await registry.teams.listJson({ resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' }, true).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 504, reason: 'Timeout' });
  });

  it('GET gives the bytes of the ordinary path and its newline, the next version after an update, and 404 after a delete', async () => {
    const cached = await registry.teams.getJson('t01');
    // The body as sent, newline included (as Go's json.Encoder ends it): the cache's own bytes,
    // the same memory for every GET, so the response hook has nothing to append and copy.
    expect(cached?.json.toString()).toBe(`${JSON.stringify(await registry.teams.get('t01'))}\n`);
    const again = (await registry.teams.getJson('t01'))!.json;
    expect([again.buffer, again.byteOffset]).toEqual([cached!.json.buffer, cached!.json.byteOffset]);
    // Each reader gets its own copy: changing one does not change the cache.
    cached!.object().metadata.name = 'changed';
    expect(cached!.object().metadata.name).toBe('t01');
    await registry.teams.patch('t01', 'merge', { spec: { displayName: 'One' } });
    expect(JSON.parse((await registry.teams.getJson('t01'))!.json.toString()).spec.displayName).toBe('One');
    await registry.teams.delete('t01');
    await expect(registry.teams.getJson('t01')).rejects.toMatchObject({ code: 404, reason: 'NotFound' });
  });

  it('an access key is served without its sealed hash, in the bytes of the ordinary path', async () => {
    const key = 'K'.repeat(40);
    await registry.ownedaccesskeys.create(accessKey('k1', { user: 'ana', key }));
    const cached = await registry.ownedaccesskeys.getJson('k1');
    expect(cached?.json.toString()).toBe(`${JSON.stringify(await registry.ownedaccesskeys.get('k1'))}\n`);
    expect(cached?.json.toString()).not.toContain('sealed');
    expect(cached?.json.toString()).not.toContain(key);
    const spliced = await registry.ownedaccesskeys.listJson({}, true);
    expect(spliced?.toString()).toBe(`${JSON.stringify(await registry.ownedaccesskeys.list({}))}\n`);
    expect(spliced?.toString()).not.toContain('sha256:');
    // The stored form, sealed hash included, is still what the store layer hands out.
    expect((await store.get<StoredApiObject>('/ownedaccesskeys/k1')).sealed?.keyHash).toMatch(/^sha256:/);
  });
});
