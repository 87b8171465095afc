/** The leader stopped while it asks for the lease (the server closing mid-election) gives back a lease it was granted meanwhile. */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Leader } from '../../src/server/background/leader.js';
import type { Lease } from '../../src/store/lease.js';

/** A lease whose grant the test releases by hand, recording what the leader did with it. */
function slowLease() {
  let grant!: (held: boolean) => void;
  const calls: string[] = [];
  let held = false;
  const lease: Lease = {
    tryAcquire: () => {
      calls.push('tryAcquire');
      return new Promise<boolean>((r) => (grant = r)).then((ok) => (held = ok));
    },
    token: () => (held ? 7 : undefined),
    valid: () => held,
    onLost: () => {},
    onRenewed: () => {},
    release: async () => {
      calls.push(held ? 'release (held)' : 'release (nothing held)');
      held = false;
    },
  };
  return { lease, calls, grant: (ok: boolean) => grant(ok), held: () => held };
}

describe('Leader stopped while asking for the lease', () => {
  it('releases the lease granted after the stop, and starts no work', async () => {
    const { lease, calls, grant, held } = slowLease();
    let started = false;
    const leader = new Leader(lease, [{ name: 'work', start: () => void (started = true), stop: () => {} }], pino({ level: 'silent' }));
    leader.start();
    await leader.stop();
    grant(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toEqual(['tryAcquire', 'release (nothing held)', 'release (held)']);
    expect(held()).toBe(false);
    expect(started).toBe(false);
    expect(leader.isLeader).toBe(false);
  });

  it('a lease granted while still trying is kept and the work started', async () => {
    const { lease, calls, grant, held } = slowLease();
    let started = false;
    const leader = new Leader(lease, [{ name: 'work', start: () => void (started = true), stop: () => {} }], pino({ level: 'silent' }));
    leader.start();
    grant(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toEqual(['tryAcquire']);
    expect(held()).toBe(true);
    expect(started).toBe(true);
    await leader.stop();
    expect(held()).toBe(false);
  });
});
