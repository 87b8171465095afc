import { describe, expect, it } from 'vitest';
import { FailureLimiter } from '../../src/auth/failure-limit.js';

describe('failed-authentication budget per client', () => {
  it('refuses after the burst, names the wait, and refills at the rate', () => {
    let now = 0;
    const limit = new FailureLimiter({ burst: 3, perSecond: 0.5, now: () => now });
    for (let i = 0; i < 3; i++) {
      expect(limit.retryAfter('a')).toBeUndefined();
      limit.fail('a');
    }
    expect(limit.retryAfter('a')).toBe(2);
    expect(limit.retryAfter('b')).toBeUndefined();
    now += 1000;
    expect(limit.retryAfter('a')).toBe(1);
    now += 1000;
    expect(limit.retryAfter('a')).toBeUndefined();
    // Fully refilled clients are forgotten.
    now += 10_000;
    expect(limit.retryAfter('a')).toBeUndefined();
    expect(limit.trackedClients).toBe(0);
  });

  it('attempts in flight together share the budget of a client that failed: one look cannot pass them all', () => {
    const limit = new FailureLimiter({ burst: 3, perSecond: 0.001, now: () => 0 });
    // A client with a full budget reserves nothing: valid keys from a busy address are never held back.
    expect(limit.reserve('fresh').some((t) => t > 0)).toBe(false);
    limit.fail('a');
    limit.fail('a'); // one unit left
    const first = limit.reserve('a');
    expect(first).toEqual([1]);
    // A second guess arriving while the first is still being checked is refused at once.
    expect(limit.retryAfter('a')).toBeGreaterThan(0);
    limit.settle('a', first, false); // the first was a valid key: its unit comes back
    expect(limit.retryAfter('a')).toBeUndefined();
    const guess = limit.reserve('a');
    limit.settle('a', guess, true); // a failure costs exactly one unit in all
    expect(limit.retryAfter('a')).toBeGreaterThan(0);
    // What a success gives back is what it took, never more: valid requests do not buy guesses.
    const valid = limit.reserve('a');
    expect(valid).toEqual([0]);
    limit.settle('a', valid, false);
    expect(limit.retryAfter('a')).toBeGreaterThan(0);
  });

  it("a client spends each of its budgets: its own, and its network's of several clients' share", () => {
    const limit = new FailureLimiter({ burst: 1, perSecond: 0.001, now: () => 0, scopes: (c) => [{ key: c, share: 1 }, { key: 'net', share: 2 }] });
    limit.fail('a');
    expect(limit.retryAfter('a')).toBeGreaterThan(0);
    // Its neighbour has its own budget, and the network one unit left.
    expect(limit.retryAfter('b')).toBeUndefined();
    const taken = limit.reserve('b');
    expect(taken).toEqual([0, 1]);
    // In flight, the network's last unit is taken: a third client waits.
    expect(limit.retryAfter('c')).toBeGreaterThan(0);
    limit.settle('b', taken, false);
    expect(limit.retryAfter('c')).toBeUndefined();
    limit.fail('b');
    expect(limit.retryAfter('c')).toBeGreaterThan(0);
    expect(limit.retryAfter('b')).toBeGreaterThan(0);
  });

  it('a failure that began on a full budget still counts when a success in flight gives its unit back', () => {
    const limit = new FailureLimiter({ burst: 2, perSecond: 0.001, now: () => 0 });
    // Two guesses begin while the budget is full: neither reserves anything.
    const first = limit.reserve('a');
    const second = limit.reserve('a');
    limit.settle('a', first, true); // 2 -> 1
    const valid = limit.reserve('a'); // a working key takes the last unit while it is checked
    limit.settle('a', second, true); // owed: 0 -> -1 (it was floored at 0, and lost)
    limit.settle('a', valid, false); // its unit back: -1 -> 0
    // Two failures on a budget of two: the next guess waits.
    expect(limit.retryAfter('a')).toBeGreaterThan(0);
  });

  it('remembers at most maxClients addresses, dropping the least recently failed', () => {
    const limit = new FailureLimiter({ burst: 1, perSecond: 0.001, maxClients: 100, now: () => 0 });
    for (let i = 0; i < 1000; i++) limit.fail(`10.0.${i >> 8}.${i & 255}`);
    expect(limit.trackedClients).toBe(100);
    expect(limit.retryAfter('10.0.3.231')).toBeGreaterThan(0); // the last one (999)
    expect(limit.retryAfter('10.0.0.0')).toBeUndefined(); // the first one, dropped
  });
});
