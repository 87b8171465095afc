/**
 * A reader who sees a few keys among many, reading a past revision (resourceVersionMatch=Exact, or
 * a continue token after any write, which kubectl's pages meet whenever the server writes between
 * them): the read goes to the store, which knows nothing of what the reader may see, so it went
 * through the whole kind in one request, or held the whole kind at once without a limit (a review
 * measured 20,000 rows read for one key). Now a page reads at most maxExaminedPerPage objects and
 * ends with a token, and a read without a limit goes through the store a thousand at a time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import type { ListOptions, ListResult, StoredObject } from '../../src/store/types.js';
import { maxExaminedPerPage } from '../../src/registry/list.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const aliceKey = `AliceKey${'k'.repeat(40)}`;
const others = maxExaminedPerPage + 2_500;

/** A store that counts the objects its lists of keys return, and the most one list returned. */
class CountingLists extends MemoryStore {
  read = 0;
  most = 0;
  override async list<T extends StoredObject>(prefix: string, opts?: ListOptions): Promise<ListResult<T>> {
    const page = await super.list<T>(prefix, opts);
    if (prefix === '/ownedaccesskeys/') {
      this.read += page.items.length;
      this.most = Math.max(this.most, page.items.length);
    }
    return page;
  }
}

interface KeyList {
  items: { metadata: { name: string } }[];
  metadata: { resourceVersion: string; continue?: string };
}

describe("a restricted reader's LIST of a past revision", () => {
  let server: InProcess;
  const inner = new CountingLists();
  const asAlice = (query: string) => server.fetch(`${server.api}/ownedaccesskeys?${query}`, { headers: { Authorization: `Bearer ${aliceKey}` } });

  beforeAll(async () => {
    server = await startInProcess({ store: new CachedStore(inner) });
    const res = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'alice-key' }, spec: { user: 'alice', key: aliceKey } }) });
    expect(res.status).toBe(201);
    // Other users' keys, written straight to the store (what the API would store, minus its checks: quicker).
    for (let i = 0; i < others; i++) {
      const name = `z-${String(i).padStart(6, '0')}`;
      await inner.create(`/ownedaccesskeys/${name}`, { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name, uid: `uid-${i}`, creationTimestamp: '2026-11-30T00:00:00Z' }, spec: { user: `u${i}` } });
    }
  }, 60_000);
  afterAll(() => server.close());

  it('a page reads at most maxExaminedPerPage keys and ends with a token; following the tokens gives her key alone', async () => {
    const now = (await (await asAlice('limit=1')).json()) as KeyList;
    const past = Number(now.metadata.resourceVersion) - 1;
    const names: string[] = [];
    const readPerPage: number[] = [];
    let pages = 0;
    let query = `limit=1&resourceVersion=${past}&resourceVersionMatch=Exact`;
    for (;;) {
      inner.read = 0;
      const res = await asAlice(query);
      readPerPage.push(inner.read);
      expect(res.status).toBe(200);
      const page = (await res.json()) as KeyList;
      pages++;
      names.push(...page.items.map((i) => i.metadata.name));
      expect(page.metadata.resourceVersion).toBe(String(past));
      if (!page.metadata.continue) break;
      query = `limit=1&continue=${page.metadata.continue}`;
    }
    expect(names).toEqual(['alice-key']);
    // Every key of the kind is read once over the pages, never more than a page's bound (and one store page past it) in one.
    expect(pages).toBe(3);
    for (const read of readPerPage) expect(read).toBeLessThanOrEqual(maxExaminedPerPage + 256);
    expect(readPerPage.reduce((a, b) => a + b)).toBeLessThanOrEqual(others + 1 + pages * 256);
  });

  it('a limit larger than the bound reads no more than the bound in one page', async () => {
    const now = (await (await asAlice('limit=1')).json()) as KeyList;
    inner.read = 0;
    const res = await asAlice(`limit=1000000&resourceVersion=${Number(now.metadata.resourceVersion) - 1}&resourceVersionMatch=Exact`);
    const page = (await res.json()) as KeyList;
    expect(page.items.map((i) => i.metadata.name)).toEqual(['alice-key']);
    expect(page.metadata.continue).toBeDefined();
    expect(inner.read).toBe(maxExaminedPerPage);
  });

  it('without a limit the answer is whole, and the store is read a thousand keys at a time', async () => {
    const now = (await (await asAlice('limit=1')).json()) as KeyList;
    inner.most = 0;
    const res = await asAlice(`resourceVersion=${Number(now.metadata.resourceVersion) - 1}&resourceVersionMatch=Exact`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as KeyList;
    expect(page.items.map((i) => i.metadata.name)).toEqual(['alice-key']);
    expect(page.metadata.continue).toBeUndefined();
    expect(inner.most).toBe(1000);
  });
});
