/**
 * The AccessRequest expiry sweep at its edges, found by a review of the `activeUntil` index
 * (src/registry/indexes.ts): an end no date parser reads is due at once, as expired() judges it
 * ended (the scan the index replaced found it; the index left it out, so it stayed Active for good);
 * and an end is reported and logged by the pass that wrote it only, not again by a pass that read
 * the request as Active from a cache behind the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/clock.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

type Request = { status?: { phase?: string; conditions?: { type: string; message?: string }[] } };

describe('the AccessRequest expiry sweep', () => {
  let server: InProcess;
  const clock = new ManualClock('2026-11-29T10:00:00Z');
  const store = (name: string, expiresAt: string) =>
    server.registry.store.create(`/accessrequests/${name}`, {
      apiVersion: 'management.service/v1',
      kind: 'AccessRequest',
      metadata: { name, uid: `uid-${name}`, creationTimestamp: '2026-11-29T09:00:00Z' },
      spec: { user: 'rita', team: 'ops', duration: '1h', reason: 'restored' },
      status: { phase: 'Active', activatedAt: '2026-11-29T09:00:00Z', expiresAt },
    });
  const read = async (name: string) => (await (await server.fetch(`${server.api}/accessrequests/${name}`)).json()) as Request;

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
  });
  afterAll(() => server.close());

  it('ends a request whose expiresAt no date parser reads (a leap second, a restored object) at the next pass', async () => {
    // RFC 3339 allows a leap second and the schema's date-time does; Date.parse does not.
    expect(Number.isNaN(Date.parse('2026-12-31T23:59:60Z'))).toBe(true);
    await store('leap', '2026-12-31T23:59:60Z');
    await store('later', '2026-11-29T12:00:00Z');
    expect(await server.accessRequestExpiry.sweep()).toEqual(['leap']);
    const ended = await read('leap');
    expect(ended.status?.phase).toBe('Expired');
    expect(ended.status?.conditions).toContainEqual(expect.objectContaining({ type: 'Expired', message: 'access ended at 2026-12-31T23:59:60Z' }));
    expect((await read('later')).status?.phase).toBe('Active');
  });

  it('reports each end once, by the pass that wrote it, when two passes read the request as due', async () => {
    clock.advance(2 * 3_600_000);
    const passes = await Promise.all([server.accessRequestExpiry.sweep(), server.accessRequestExpiry.sweep()]);
    expect(passes.flat()).toEqual(['later']);
    expect((await read('later')).status?.phase).toBe('Expired');
  });
});
