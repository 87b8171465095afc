/**
 * The watch cache's indexes (registry/indexes.ts: holder, team, owner uid, terminating, an
 * AccessRequest's user and its team, a key that may notify, a FederatedCredential's issuer, a Team's references; expiry, an Active AccessRequest's end,
 * last use, identity refresh) answer as the scans they replace: after every random write, and
 * after a compaction, a relist (the cache filling itself again) and a restart (a new cache over
 * the same SQLite file), each lookup through the cache's index equals the store's whole list
 * filtered by the same index function, which is what the lookup's fallback and the old scans read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { fieldValues } from '../../src/store/cache/field-index.js';
import { cacheIndexers, fieldIndexes, mayNotifyValue, timeIndexes } from '../../src/registry/indexes.js';
import { disabledReasonAnnotation, keyDeliveredAnnotation } from '../../src/api/key-notices.js';
import { accessKeyIndexer } from '../../src/registry/registry.js';
import type { Store, StoredObject } from '../../src/store/types.js';

const names = ['a', 'b', 'c', 'd', 'e'];
const people = ['ann', 'bob', 'team:ops'];
const teams = ['ops', 'dev'];
const uids = ['u1', 'u2', 'u3'];
const day = 86_400_000;
const t0 = Date.parse('2026-11-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const prefixes = ['/ownedaccesskeys/', '/teams/', '/accessrequests/', '/federatedcredentials/'];
const issuers = ['https://token.actions.githubusercontent.com', 'https://gitlab.example'];
const keyArb = fc.tuple(fc.constantFrom(...prefixes), fc.constantFrom(...names)).map(([p, n]) => p + n);
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const bodyArb = fc.record({
  user: opt(fc.constantFrom(...people)),
  team: opt(fc.constantFrom(...teams)),
  subject: opt(fc.constantFrom(...people)),
  login: fc.boolean(),
  ttlDays: opt(fc.integer({ min: 1, max: 40 })),
  // Times within a day to the second: instants off the time index's minute buckets, and on them.
  ttlSeconds: fc.integer({ min: 0, max: 3599 }),
  afterActivity: fc.boolean(),
  createdDay: fc.integer({ min: 0, max: 30 }),
  createdSecond: fc.integer({ min: 0, max: 86_399 }),
  activityDay: opt(fc.integer({ min: 0, max: 30 })),
  activitySecond: fc.integer({ min: 0, max: 86_399 }),
  refreshDay: opt(fc.integer({ min: 0, max: 30 })),
  owners: fc.subarray(uids),
  terminating: fc.boolean(),
  phase: fc.constantFrom('Pending', 'Active', 'Expired'),
  disabled: fc.boolean(),
  reason: opt(fc.constantFrom('reported-leaked', '')),
  awaiting: fc.boolean(),
  delivered: opt(fc.constantFrom('pending:github:o/r/S', 'github:o/r/S')),
  issuer: opt(fc.constantFrom(...issuers, '')),
  owner: opt(fc.constantFrom({ user: 'ann' }, { team: 'ops' })),
  ruleUsers: fc.subarray(people),
});
type Body = typeof bodyArb extends fc.Arbitrary<infer T> ? T : never;
const opArb = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('put' as const), key: keyArb, body: bodyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key: keyArb }) },
  fc.record({ op: fc.constant('compact' as const) }),
  fc.record({ op: fc.constant('relist' as const) }),
  fc.record({ op: fc.constant('restart' as const) }),
);
type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never;

function objectOf(key: string, b: Body): StoredObject {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const spec: Record<string, unknown> = {};
  for (const f of ['user', 'team', 'subject'] as const) if (b[f] !== undefined) spec[f] = b[f];
  if (b.login) spec.type = 'Login';
  if (b.ttlDays !== undefined) spec.ttl = b.ttlDays * 86_400 + b.ttlSeconds;
  if (b.afterActivity) spec.ttlAfterLastActivity = true;
  if (b.refreshDay !== undefined) spec.identityRefresh = iso(t0 + b.refreshDay * day);
  if (b.disabled) spec.disabled = true;
  if (b.issuer !== undefined) spec.issuer = b.issuer;
  if (b.owner !== undefined) spec.owner = b.owner;
  if (b.ruleUsers.length > 0) spec.access = [{ verbs: ['get'], users: b.ruleUsers }];
  const annotations = { ...(b.reason !== undefined ? { [disabledReasonAnnotation]: b.reason } : {}), ...(b.delivered !== undefined ? { [keyDeliveredAnnotation]: b.delivered } : {}) };
  const status = {
    ...(b.activityDay !== undefined ? { lastActivity: iso(t0 + b.activityDay * day + b.activitySecond * 1000) } : {}),
    ...(b.phase !== 'Pending' ? { phase: b.phase, expiresAt: iso(t0 + b.createdDay * day + b.createdSecond * 1000) } : {}),
    ...(b.awaiting ? { rotation: { awaitingConfirmation: true } } : {}),
  };
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      creationTimestamp: iso(t0 + b.createdDay * day + b.createdSecond * 1000),
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ...(b.owners.length ? { ownerReferences: b.owners.map((uid) => ({ apiVersion: 'management.service/v1', kind: 'Team', name: uid, uid })) } : {}),
      ...(b.terminating ? { deletionTimestamp: iso(t0) } : {}),
    },
    spec,
    ...(Object.keys(status).length ? { status } : {}),
  } as StoredObject;
}

/** Every value an index could be asked for, and instants across the objects' range. */
const fieldQueries: Record<keyof typeof fieldIndexes, readonly string[]> = {
  holder: [...people, ''],
  credentialFor: [...people, ...teams.map((t) => `team:${t}`), ''],
  team: teams,
  requestTeam: teams,
  owner: uids,
  lifecycle: ['terminating'],
  requester: [...people, ''],
  activeRequester: [...people, ''],
  notice: [mayNotifyValue],
  issuer: [...issuers, ''],
  references: ['u:ann', 'u:bob', 't:ops', 'u:team:ops'],
};
const instants = [-1, 0, 5, 12.5, 20, 31, 45, 80].map((d) => t0 + d * day).concat([5 * day + 30_000, 12 * day + 59_999, 20 * day + 60_000, 31 * day + 3_599_000].map((ms) => t0 + ms));

async function expectIndexesMatch(cache: CachedStore, inner: Store): Promise<void> {
  for (const prefix of prefixes) {
    const all = (await inner.list(prefix)).items;
    const keyed = all.map((o) => ({ key: prefix + (o.metadata as { name: string }).name, o }));
    for (const [index, values] of Object.entries(fieldQueries)) {
      for (const value of values) {
        const want = keyed.filter(({ key, o }) => fieldValues(fieldIndexes[index as keyof typeof fieldIndexes](key, o)).includes(value)).map(({ o }) => o);
        // Defined: the cache's index answered, not the store behind it.
        expect(await cache.byField(prefix, index, value), `${prefix} ${index}=${value}`).toEqual(want);
      }
    }
    for (const [index, of] of Object.entries(timeIndexes)) {
      for (const at of instants) {
        const want = keyed.filter(({ key, o }) => {
          const t = of(key, o);
          return t !== undefined && Number.isFinite(t) && t <= at;
        });
        expect([...((await cache.dueBy(prefix, index, at)) ?? [])], `${prefix} ${index}<=${iso(at)}`).toEqual(want.map(({ o }) => o));
      }
    }
  }
}

function open(path: string): { inner: SqliteStore; cache: CachedStore } {
  const inner = new SqliteStore(path, { pollIntervalMs: 60_000 });
  const cache = new CachedStore(inner, { retryMs: 5 });
  cache.setIndexer(accessKeyIndexer);
  cache.setCacheIndexers(cacheIndexers);
  return { inner, cache };
}

async function play(ops: Op[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-cache-indexes-'));
  let { inner, cache } = open(join(dir, 'store.db'));
  try {
    expect(await cache.ready(5000)).toBe(true);
    for (const op of ops) {
      if (op.op === 'put') {
        const obj = objectOf(op.key, op.body);
        await cache.create(op.key, obj).catch(() => cache.guaranteedUpdate(op.key, undefined, (cur) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: cur.metadata?.resourceVersion } })));
      } else if (op.op === 'delete') await cache.delete(op.key).catch(() => undefined);
      else if (op.op === 'compact') await cache.compact(await cache.currentRevision());
      else if (op.op === 'relist') cache.setCacheIndexers(cacheIndexers);
      else {
        await cache.close();
        ({ inner, cache } = open(join(dir, 'store.db')));
      }
      expect(await cache.ready(5000)).toBe(true);
      await expectIndexesMatch(cache, inner);
    }
  } finally {
    await cache.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the watch cache indexes', () => {
  it('equal the filtered list they replace after random writes, compactions, relists and restarts', async () => {
    await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 20 }), play), { numRuns: 40, interruptAfterTimeLimit: 60_000, markInterruptAsFailure: true });
  }, 40_000);
});
