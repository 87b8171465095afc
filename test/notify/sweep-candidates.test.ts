/**
 * The notifier's sweep reads only the keys that can have something to say, found through the
 * watch cache's indexes (the `notice` field index, expiry and last use), and finds exactly what a
 * walk over every key finds: the same events to send at once and the same digest warnings, in the
 * same order. Checked on generated fleets (disables with and without a reason, re-enables,
 * rotations awaiting confirmation, pending deliveries, ttls from creation or from last activity,
 * uses known only in memory, keys being deleted) at generated times and windows, with and without
 * the unused-key rule.
 */
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { disabledReasonAnnotation, keyDeliveredAnnotation, otherDisabledReasonAnnotation } from '../../src/api/key-notices.js';
import { reEnabledAtAnnotation } from '../../src/api/re-enable.js';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { keyHealth } from '../../src/auth/key-health.js';
import { immediateEvents, warningEvents, type KeyEvent } from '../../src/notify/events.js';
import { Notifier, type NotifierOptions } from '../../src/notify/notifier.js';
import { createRegistry, type Registry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import type { StoredObject } from '../../src/store/types.js';

const day = 86_400_000;
const t0 = Date.parse('2026-11-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
/** Absent half the time. */
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
/** True one time in `n`. */
const oneIn = (n: number) => fc.integer({ min: 1, max: n }).map((i) => i === 1);
const at = (d: number) => iso(t0 + d * day);

const keyArb = fc.record({
  /** Absent now and then: a key written to the store without one (the registry always sets it). */
  createdDay: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined, freq: 5 }),
  ttlDays: maybe(fc.integer({ min: 1, max: 40 })),
  afterActivity: fc.boolean(),
  activityDay: opt(fc.integer({ min: 0, max: 40 })),
  /** A use the server knows only in memory (not yet written to status.lastActivity). */
  usedDay: opt(fc.integer({ min: 0, max: 45 })),
  disabled: oneIn(4),
  reason: opt(fc.constantFrom('reported-leaked', 'unused for 90d', '')),
  otherReason: opt(fc.constantFrom('reported-leaked: found in a gist', 'by hand')),
  /** Whose write disabled it: the server's (a leak report, the unused-key rule) or its holder's. */
  disabler: opt(fc.constantFrom('teamkeys-leak-report', 'teamkeys-unused-keys', 'kubectl')),
  reEnabledDay: opt(fc.integer({ min: 0, max: 40 })),
  awaiting: oneIn(4),
  rotatedDay: fc.integer({ min: 0, max: 40 }),
  delivered: opt(fc.constantFrom('pending:github:org/repo/TOKEN', 'github:org/repo/TOKEN')),
  writtenDay: opt(fc.integer({ min: 0, max: 40 })),
  terminating: oneIn(8),
  holder: fc.constantFrom({ user: 'ann' }, { team: 'platform' }),
});
type KeyCase = typeof keyArb extends fc.Arbitrary<infer T> ? T : never;

/** Who wrote the key: git's apply, and the writer that disabled it (its reason and spec.disabled). */
function managedFieldsOf(k: KeyCase): object[] {
  const fieldsV1 = { 'f:metadata': { 'f:annotations': { [`f:${disabledReasonAnnotation}`]: {} } }, 'f:spec': { 'f:disabled': {} } };
  return [
    ...(k.writtenDay !== undefined ? [{ manager: 'gitops', operation: 'Apply', time: at(k.writtenDay) }] : []),
    ...(k.disabler !== undefined ? [{ manager: k.disabler, operation: 'Update', time: at(k.writtenDay ?? 0), fieldsType: 'FieldsV1', fieldsV1 }] : []),
  ];
}

function keyOf(name: string, k: KeyCase): StoredObject {
  const annotations: Record<string, string> = {};
  if (k.reason !== undefined) annotations[disabledReasonAnnotation] = k.reason;
  if (k.otherReason !== undefined) annotations[otherDisabledReasonAnnotation] = k.otherReason;
  if (k.reEnabledDay !== undefined) annotations[reEnabledAtAnnotation] = at(k.reEnabledDay);
  if (k.delivered !== undefined) annotations[keyDeliveredAnnotation] = k.delivered;
  const status = {
    ...(k.activityDay !== undefined ? { lastActivity: at(k.activityDay) } : {}),
    ...(k.awaiting ? { rotation: { awaitingConfirmation: true, rotatedAt: at(k.rotatedDay) } } : {}),
  };
  return {
    apiVersion: 'management.service/v1',
    kind: 'OwnedAccessKey',
    metadata: {
      name,
      uid: `uid-${name}`,
      ...(k.createdDay !== undefined ? { creationTimestamp: at(k.createdDay) } : {}),
      generation: 1,
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ...(k.writtenDay !== undefined || k.disabler !== undefined ? { managedFields: managedFieldsOf(k) } : {}),
      ...(k.terminating ? { deletionTimestamp: at(k.createdDay ?? 0), finalizers: ['example.com/hold'] } : {}),
    },
    spec: {
      ...k.holder,
      ...(k.ttlDays !== undefined ? { ttl: k.ttlDays * 86_400 } : {}),
      ...(k.afterActivity ? { ttlAfterLastActivity: true } : {}),
      ...(k.disabled ? { disabled: true } : {}),
    },
    ...(Object.keys(status).length ? { status } : {}),
  } as StoredObject;
}

const silent = pino({ level: 'silent' });
const noMetrics = { attempt: () => {}, failing: () => {} };

async function fleet(keys: KeyCase[], opts: Omit<NotifierOptions, 'config'>) {
  const store = new CachedStore(new MemoryStore(), { retryMs: 5 });
  const registry: Registry = createRegistry(store);
  const used = new Map<string, number>();
  for (const [i, k] of keys.entries()) {
    const name = `key-${String(i).padStart(3, '0')}`;
    await store.create(`/ownedaccesskeys/${name}`, keyOf(name, k));
    if (k.usedDay !== undefined) used.set(name, t0 + k.usedDay * day);
  }
  expect(await store.ready(5000)).toBe(true);
  let read = 0;
  const lastUsed = (name: string) => {
    read++;
    return used.get(name);
  };
  const notifier = new Notifier(registry, lastUsed, silent, noMetrics, { config: { receivers: [], routes: [] }, ...opts });
  return { store, registry, notifier, used, keysRead: () => read };
}

/** What the sweep found before it read by index: every key, in key order. */
async function walk(registry: Registry, used: Map<string, number>, now: Date, opts: { warnExpiryMs: number; disableUnusedAfterMs?: number; failureGraceMs?: number }) {
  const immediate: KeyEvent[] = [];
  const warnings: KeyEvent[] = [];
  for await (const o of registry.ownedaccesskeys.scan()) {
    const key = o as OwnedAccessKey;
    immediate.push(...immediateEvents(key, now, opts));
    warnings.push(...warningEvents(key, keyHealth(key, now, used.get(key.metadata.name!)), now, opts));
  }
  return { immediate, warnings };
}

describe("the notifier's sweep", () => {
  it('finds what a walk over every key finds, in the same order, reading keys by index', async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(keyArb, { maxLength: 14 }),
        fc.integer({ min: 0, max: 60 * 24 }),
        fc.integer({ min: 1, max: 30 }),
        fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined, freq: 4 }),
        fc.integer({ min: 1, max: 3 * 24 }),
        async (keys, nowHours, warnDays, unusedDays, graceHours) => {
          const opts = { warnExpiryMs: warnDays * day, failureGraceMs: graceHours * 3_600_000, ...(unusedDays !== undefined ? { disableUnusedAfterMs: unusedDays * day } : {}) };
          const { store, registry, notifier, used } = await fleet(keys, opts);
          try {
            const now = new Date(t0 + nowHours * 3_600_000);
            const want = await walk(registry, used, now, opts);
            expect(await notifier.events(now)).toEqual(want);
            for (const e of [...want.immediate, ...want.warnings]) seen.set(e.event, (seen.get(e.event) ?? 0) + 1);
          } finally {
            await store.close();
          }
        },
      ),
      {
        numRuns: 150,
        // Seeded: the event counts asserted below vary by seed, and about one seed in a thousand
        // drew ten KeyUnused or fewer (a review measured 4,000). SWEEP_CANDIDATES_SEED explores others.
        seed: Number(process.env.SWEEP_CANDIDATES_SEED ?? 20261130),
        // About 2 s on a quiet machine: a run cut short fails rather than checking less.
        interruptAfterTimeLimit: 60_000,
        markInterruptAsFailure: true,
        examples: [
          // Found by this property: a use remembered from before the key's creation (key-health.ts).
          [[{ createdDay: 1, afterActivity: false, usedDay: 0, disabled: false, awaiting: false, rotatedDay: 0, terminating: false, holder: { user: 'ann' } } as KeyCase], 0, 4, 4, 1],
          // Found in review: a key without a creation time had no instant in the lastUse index.
          [[{ afterActivity: false, disabled: false, awaiting: false, rotatedDay: 0, terminating: false, holder: { user: 'ann' } } as KeyCase], 0, 10, 5, 1],
        ],
      },
    );
    // The generated fleets had every kind of event to find, many times over.
    for (const event of ['KeyLeaked', 'KeyDisabled', 'RotationFailed', 'DeliveryFailed', 'KeyExpiring', 'KeyUnused']) expect(seen.get(event) ?? 0, event).toBeGreaterThan(10);
  }, 90_000);

  it('reads the few keys that have something to say, not the fleet', async () => {
    // 500 keys that never expire and say nothing, one leaked, one rotation awaiting confirmation,
    // one delivery pending, one expiring within the window, one far from it.
    const quiet: KeyCase = { createdDay: 1, afterActivity: false, disabled: false, awaiting: false, rotatedDay: 0, terminating: false, holder: { user: 'ann' } } as KeyCase;
    const keys: KeyCase[] = Array.from({ length: 500 }, () => quiet);
    keys.push({ ...quiet, disabled: true, reason: 'reported-leaked', disabler: 'teamkeys-leak-report' });
    keys.push({ ...quiet, awaiting: true, rotatedDay: 2 });
    keys.push({ ...quiet, delivered: 'pending:github:org/repo/TOKEN' });
    keys.push({ ...quiet, ttlDays: 12 });
    keys.push({ ...quiet, ttlDays: 400 });
    const { store, notifier, keysRead } = await fleet(keys, { warnExpiryMs: 7 * day });
    try {
      const found = await notifier.events(new Date(t0 + 10 * day));
      expect(found!.immediate.map((e) => [e.event, e.key.name])).toEqual([
        ['KeyLeaked', 'key-500'],
        ['RotationFailed', 'key-501'],
        ['DeliveryFailed', 'key-502'],
      ]);
      expect(found!.warnings.map((e) => [e.event, e.key.name])).toEqual([['KeyExpiring', 'key-503']]);
      // The four that may say something; not the 500 quiet keys, nor the one expiring in a year.
      expect(keysRead()).toBe(4);
    } finally {
      await store.close();
    }
  });
});
