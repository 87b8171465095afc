import { describe, expect, it } from 'vitest';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { expiresWithin, formatSpan, keyHealth, unusedFor } from '../../src/auth/key-health.js';
import { timeIndexes } from '../../src/registry/indexes.js';
import { day, hour } from '../support/clock.js';

const created = '2026-08-01T00:00:00Z';
const key = (spec: Partial<OwnedAccessKey['spec']>, status?: OwnedAccessKey['status']): OwnedAccessKey => ({
  apiVersion: 'management.service/v1',
  kind: 'OwnedAccessKey',
  metadata: { name: 'ci', creationTimestamp: created },
  spec: { user: 'dora', ...spec },
  ...(status ? { status } : {}),
});
const at = (ms: number) => new Date(Date.parse(created) + ms);

describe('key health', () => {
  it('a key with a ttl enters the expiry window, then expires', () => {
    const k = key({ ttl: 10 * 86_400 });
    expect(keyHealth(k, at(day)).expiresAt).toBe(Date.parse('2026-08-11T00:00:00Z'));
    expect(expiresWithin(keyHealth(k, at(day)), 7 * day)).toBe(false);
    expect(expiresWithin(keyHealth(k, at(4 * day)), 7 * day)).toBe(true);
    const later = keyHealth(k, at(10 * day));
    expect([later.expired, expiresWithin(later, 7 * day)]).toEqual([true, false]);
  });

  it('a key without ttl never expires', () => {
    const h = keyHealth(key({}), at(400 * day));
    expect([h.expiresAt, h.expired, expiresWithin(h, 1000 * day)]).toEqual([undefined, false, false]);
  });

  it('last use is status.lastActivity, the creation when never used, or a later use known in memory', () => {
    const never = keyHealth(key({}), at(91 * day));
    expect([never.neverUsed, never.lastUse, unusedFor(never, 90 * day)]).toEqual([true, Date.parse(created), true]);
    const used = keyHealth(key({}, { lastActivity: '2026-10-01T00:00:00Z' }), at(91 * day));
    expect([used.neverUsed, unusedFor(used, 90 * day)]).toEqual([false, false]);
    const inMemory = keyHealth(key({}), at(91 * day), at(90 * day + hour).getTime());
    expect([inMemory.neverUsed, inMemory.unusedForMs]).toEqual([false, day - hour]);
  });

  it('a key without a creation time, never used, is unused since ever: the lastUse index says the same, so the sweeps and the digest agree', () => {
    const undated: OwnedAccessKey = { ...key({}), metadata: { name: 'ci' } };
    for (const now of [at(day), at(400 * day)]) {
      const h = keyHealth(undated, now);
      expect([h.neverUsed, h.undated, h.lastUse, unusedFor(h, 90 * day)]).toEqual([true, true, 0, true]);
    }
    // Over keys with and without a creation time and a recorded use, the health's last use is the index's.
    for (const metadata of [{ name: 'ci' }, { name: 'ci', creationTimestamp: created }]) {
      for (const status of [undefined, { lastActivity: '2026-09-01T00:00:00Z' }]) {
        const k: OwnedAccessKey = { ...key({}, status), metadata };
        expect(keyHealth(k, at(day)).lastUse).toBe(timeIndexes.lastUse('/ownedaccesskeys/ci', k));
        expect(keyHealth(k, at(day)).undated).toBe(metadata.creationTimestamp === undefined && status === undefined ? true : undefined);
      }
    }
  });

  it('a use remembered from before the key was created is not its own (an earlier key of the same name)', () => {
    // Found by test/notify/sweep-candidates.test.ts: the stale use made a key created a day ago "unused for" 91 days.
    const made = keyHealth(key({}), at(day), at(-90 * day).getTime());
    expect([made.neverUsed, made.lastUse, made.unusedForMs, unusedFor(made, 90 * day)]).toEqual([true, Date.parse(created), day, false]);
    const recordedToo = keyHealth(key({}, { lastActivity: '2026-08-01T12:00:00Z' }), at(day), at(-90 * day).getTime());
    expect([recordedToo.neverUsed, recordedToo.unusedForMs]).toEqual([false, day / 2]);
  });

  it('ttlAfterLastActivity counts from the last use; owner names user, team or subject', () => {
    const h = keyHealth(key({ ttl: 86_400, ttlAfterLastActivity: true }, { lastActivity: '2026-08-05T00:00:00Z' }), at(5 * day));
    expect(h.expiresAt).toBe(Date.parse('2026-08-06T00:00:00Z'));
    expect(keyHealth(key({ user: undefined, team: 'payments' }), at(0)).owner).toBe('team:payments');
    expect(keyHealth(key({ type: 'Login' }), at(0)).login).toBe(true);
    expect([formatSpan(3 * day + hour), formatSpan(5 * hour), formatSpan(90_000), formatSpan(4000)]).toEqual(['3d', '5h', '1m', '4s']);
  });
});
