/**
 * What the request path and the AccessRequest expiry sweep read (issue 38: no request path and no
 * periodic tick walks every object). The server runs over the watch cache as teamkeys serve does,
 * behind a layer that records every read of a whole range of the store (list, scan, the cache's
 * ranges); with many AccessRequests stored, an authenticated request reads its user's requests by
 * the `requester` index and the sweep reads the Active ones due by the `activeUntil` index: neither
 * reads the range of every request. Before, each request listed every AccessRequest, and the
 * sweep (every second) scanned them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import type { Store } from '../../src/store/types.js';
import { ManualClock } from '../support/clock.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const aliceKey = `AliceKey${'a'.repeat(40)}`;
const bobKey = `BobKey${'b'.repeat(40)}`;

/** The cache, with each whole-range read it answers (list, scan, cachedRange, cachedList) recorded by prefix, and each index lookup with how many objects it gave. */
function recording(cache: CachedStore): { store: Store; ranges: string[]; lookups: string[] } {
  const ranges: string[] = [];
  const lookups: string[] = [];
  const store = new Proxy(cache, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (prop === 'byField') {
        return async (prefix: string, index: string, v: string) => {
          const found = (await (value as (...a: unknown[]) => Promise<unknown[]>).call(receiver, prefix, index, v)) as unknown[];
          lookups.push(`${prefix} ${index}=${v}: ${found.length}`);
          return found;
        };
      }
      if (['list', 'scan', 'cachedRange', 'cachedList'].includes(String(prop))) {
        return (prefix: string, ...rest: unknown[]) => {
          ranges.push(prefix);
          return (value as (...a: unknown[]) => unknown).call(receiver, prefix, ...rest);
        };
      }
      return value;
    },
  });
  return { store, ranges, lookups };
}

describe('reads of the request path and the AccessRequest expiry sweep', () => {
  let server: InProcess;
  let ranges: string[];
  let lookups: string[];
  const clock = new ManualClock('2026-11-27T10:00:00Z');
  const make = async (path: string, body: unknown) => {
    const res = await server.fetch(`${server.api}/${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as { metadata: { name: string } };
  };

  beforeAll(async () => {
    const cache = new CachedStore(new MemoryStore());
    const recorded = recording(cache);
    ranges = recorded.ranges;
    lookups = recorded.lookups;
    server = await startInProcess({ store: recorded.store, now: clock.now });
    await make('teams', { metadata: { name: 'payments' }, spec: { owner: { user: 'bob' }, users: ['carol'] } });
    // payments' members may read team ledger: what alice's approved request gives her.
    await make('teams', { metadata: { name: 'ledger' }, spec: { access: [{ verbs: ['get'], teams: ['payments'], users: ['bob'] }] } });
    await make('ownedaccesskeys', { metadata: { name: 'alice-key' }, spec: { user: 'alice', key: aliceKey } });
    await make('ownedaccesskeys', { metadata: { name: 'bob-key' }, spec: { user: 'bob', key: bobKey } });
    // Requests of many other users (made by the administrator for them), many of alice's that are
    // still Pending (made for her by the administrator), one of hers approved by bob (payments' owner).
    for (let i = 0; i < 40; i++) await make('accessrequests', { metadata: { name: `alice-pending-${i}` }, spec: { user: 'alice', team: 'payments', duration: '1h', reason: 'asked for her' } });
    for (let i = 0; i < 60; i++) await make('accessrequests', { metadata: { name: `other-${i}` }, spec: { user: `user-${i}`, team: 'payments', duration: '1h', reason: 'load' } });
    const mine = await make('accessrequests', { metadata: { name: 'alice-req' }, spec: { user: 'alice', team: 'payments', duration: '1h', reason: 'INC-1' } });
    const current = (await (await server.fetch(`${server.api}/accessrequests/${mine.metadata.name}`)).json()) as { status?: { conditions?: unknown[] } };
    const approved = await server.fetch(`${server.api}/accessrequests/${mine.metadata.name}/approval`, {
      method: 'PUT',
      headers: { ...json, Authorization: `Bearer ${bobKey}` },
      body: JSON.stringify({ ...current, status: { ...current.status, conditions: [...(current.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'ByHand', message: 'ok' }] } }),
    });
    expect(approved.status, await approved.clone().text()).toBe(200);
  });
  afterAll(() => server.close());

  it("an authenticated request reads its user's AccessRequests by index: alice's approval works, and no request reads the range of every AccessRequest", async () => {
    ranges.length = 0;
    const res = await server.fetch(`${server.api}/teams/ledger`, { headers: { Authorization: `Bearer ${aliceKey}` } });
    expect(res.status).toBe(200);
    // The approval makes alice a member of payments, which may read ledger; without it she is refused (403).
    expect(((await res.json()) as { metadata: { name: string } }).metadata.name).toBe('ledger');
    expect(ranges.filter((p) => p.startsWith('/accessrequests/'))).toEqual([]);
  });

  it("authentication reads alice's Active request alone, not the 40 others of hers that are Pending (nor those that ended)", async () => {
    lookups.length = 0;
    expect((await server.fetch(`${server.api}/teams/ledger`, { headers: { Authorization: `Bearer ${aliceKey}` } })).status).toBe(200);
    expect(lookups.filter((l) => l.startsWith('/accessrequests/'))).toEqual(['/accessrequests/ activeRequester=alice: 1']);
  });

  it('the expiry sweep reads the Active requests due by index: it records the end of the one due, and no sweep reads the range of every AccessRequest', async () => {
    ranges.length = 0;
    expect(await server.accessRequestExpiry.sweep()).toEqual([]);
    clock.advance(3_600_000 + 1_000);
    expect(await server.accessRequestExpiry.sweep()).toEqual(['alice-req']);
    expect(ranges.filter((p) => p.startsWith('/accessrequests/'))).toEqual([]);
    expect((await server.fetch(`${server.api}/teams/ledger`, { headers: { Authorization: `Bearer ${aliceKey}` } })).status).toBe(403);
  });
});
