/**
 * Review: a key's expiry that no date parser reads must not make the key last forever. The schema's
 * date-time accepts a leap second (`23:59:60Z`), which Date.parse reads as NaN: a ttlAfterLastActivity
 * key whose status.lastActivity is one has expiresAt() NaN (expiry.ts: Math.max(.., NaN, ..)), and
 * `now > NaN` is false, so authentication accepts it however long it stays unused; the `expiry` time
 * index leaves a non-finite instant out (cache-state.ts), so the sweeps never see it either, and the
 * escalation check (widens: `NaN > was` is false) lets a writer whose own key expires make it so.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, day } from '../support/clock.js';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { expiresAt } from '../../src/auth/expiry.js';
import type { OwnedAccessKey } from '../../src/api/types.js';

const value = 'Unparseable0expiry0key0value0abcdefghijkl';
const merge = { 'Content-Type': 'application/merge-patch+json' };

describe('an expiry that does not parse', () => {
  let server: InProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a ttlAfterLastActivity key whose lastActivity is a (schema-valid) leap second is refused once its ttl has passed unused', async () => {
    const clock = new ManualClock('2026-07-01T00:00:00Z');
    server = await startInProcess({ now: clock.now });
    const created = await server.fetch(`${server.api}/ownedaccesskeys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'ci' }, spec: { user: 'ann', key: value, ttl: 3600, ttlAfterLastActivity: true } }),
    });
    expect(created.status).toBe(201);
    // An administrator's status write (e.g. restoring a dumped object); the schema accepts it.
    const written = await server.fetch(`${server.api}/ownedaccesskeys/ci/status`, { method: 'PATCH', headers: merge, body: JSON.stringify({ status: { lastActivity: '2026-06-30T23:59:60Z' } }) });
    expect(written.status).toBe(200);
    const stored = (await server.registry.ownedaccesskeys.get('ci')) as OwnedAccessKey;
    expect(stored.status?.lastActivity).toBe('2026-06-30T23:59:60Z');

    // A year unused: its ttl (1h after its last activity, at most creation + 1h) has long passed.
    clock.advance(365 * day);
    const use = await fetch(`${server.api}/ownedaccesskeys/ci`, { headers: { Authorization: `Bearer ${value}` } });
    expect(use.status, `expiresAt is ${expiresAt(stored)}`).toBe(401);
  });

  it('the expiry sweeps find such a key as due (expiry index)', async () => {
    const clock = new ManualClock('2026-07-01T00:00:00Z');
    server = await startInProcess({ now: clock.now });
    await server.fetch(`${server.api}/ownedaccesskeys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'ci' }, spec: { user: 'ann', key: value, ttl: 3600, ttlAfterLastActivity: true } }),
    });
    await server.fetch(`${server.api}/ownedaccesskeys/ci/status`, { method: 'PATCH', headers: merge, body: JSON.stringify({ status: { lastActivity: '2026-06-30T23:59:60Z' } }) });
    clock.advance(365 * day);
    const due = await server.registry.ownedaccesskeys.dueBy('expiry', clock.now().getTime() - 20 * day);
    expect(due.map((k) => k.metadata.name)).toContain('ci');
  });

  it("a writer whose own key expires cannot make a key outlive it with such a time, as it cannot with a later lastActivity", async () => {
    const clock = new ManualClock('2026-07-01T00:00:00Z');
    server = await startInProcess({ now: clock.now });
    const post = (path: string, body: unknown) => server!.fetch(`${server!.api}/${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('teams', { metadata: { name: 'key-admins' }, spec: { users: ['root2'], clusterRoles: [{ name: 'accesskeys-admin' }] } })).status).toBe(201);
    // An accesskeys-admin whose key lasts an hour: keys it widens must expire no later (escalation.ts).
    const admin2 = 'ShortLivedKeysAdmin0value0abcdefghijklmno';
    expect((await post('ownedaccesskeys', { metadata: { name: 'root2-key' }, spec: { user: 'root2', key: admin2, ttl: 3600 } })).status).toBe(201);
    expect((await post('ownedaccesskeys', { metadata: { name: 'ci' }, spec: { user: 'ann', key: value, ttl: 3600, ttlAfterLastActivity: true } })).status).toBe(201);
    const status = (lastActivity: string) =>
      fetch(`${server!.api}/ownedaccesskeys/ci/status`, { method: 'PATCH', headers: { ...merge, Authorization: `Bearer ${admin2}` }, body: JSON.stringify({ status: { lastActivity } }) });
    expect((await status('2099-01-01T00:00:00Z')).status).toBe(403); // refused: the key would outlive the writer's
    // The same by a time that does not parse: refused, or accepted without making the key last longer.
    const leap = await status('2026-06-30T23:59:60Z');
    expect([200, 403]).toContain(leap.status);
    clock.advance(365 * day);
    const use = await fetch(`${server.api}/ownedaccesskeys/ci`, { headers: { Authorization: `Bearer ${value}` } });
    expect(use.status, 'the key outlives the short-lived writer that wrote its status').toBe(401);
  });
});

describe('expiresAt over generated keys', () => {
  it('is undefined only for a key without ttl, else an instant (never NaN) no later than its latest readable time plus its ttl', () => {
    const time = fc.oneof(fc.constant(undefined), fc.string(), fc.date({ min: new Date(0), max: new Date('2200-01-01'), noInvalidDate: true }).map((d) => d.toISOString()), fc.constant('2026-06-30T23:59:60Z'));
    fc.assert(
      fc.property(time, time, fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 10 ** 9 }), fc.anything()), fc.boolean(), fc.oneof(fc.constant(undefined), fc.constant(NaN), fc.integer({ min: 0, max: 2 ** 42 })), (created, lastActivity, ttl, afterActivity, lastUse) => {
        const key = { metadata: { creationTimestamp: created }, spec: { user: 'u', ttl, ttlAfterLastActivity: afterActivity }, status: { lastActivity } } as unknown as OwnedAccessKey;
        const at = expiresAt(key, lastUse);
        if (!ttl) {
          expect(at).toBeUndefined();
          return;
        }
        expect(typeof at === 'number' && !Number.isNaN(at), `expiresAt is ${at}`).toBe(true);
        const readable = [created, afterActivity ? lastActivity : undefined].map((s) => (typeof s === 'string' ? Date.parse(s) : NaN)).filter(Number.isFinite);
        const latest = Math.max(0, ...readable, afterActivity && Number.isFinite(lastUse) ? lastUse! : 0);
        // A ttl that is not a finite number lasts no time at all (expiry.ts): the bound is the base.
        expect(at!).toBeLessThanOrEqual(latest + (typeof ttl === 'number' && Number.isFinite(ttl) ? ttl * 1000 : 0));
      }),
      {
        numRuns: 500,
        // Found by a run of the suite: the bound added an infinite ttl, and -Infinity is below every instant.
        examples: [
          ['1970-01-01T00:00:00.000Z', '2026-06-30T23:59:60Z', Number.NEGATIVE_INFINITY, false, undefined],
          ['2026-07-01T00:00:00.000Z', '2026-06-30T23:59:60Z', Number.POSITIVE_INFINITY, true, 5],
          ['2026-07-01T00:00:00.000Z', undefined, Number.NaN, true, undefined],
        ],
      },
    );
  });
});
