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

  it('remembers at most maxClients addresses, dropping the least recently failed', () => {
    const limit = new FailureLimiter({ burst: 1, perSecond: 0.001, maxClients: 100, now: () => 0 });
    for (let i = 0; i < 1000; i++) limit.fail(`10.0.${i >> 8}.${i & 255}`);
    expect(limit.trackedClients).toBe(100);
    expect(limit.retryAfter('10.0.3.231')).toBeGreaterThan(0); // the last one (999)
    expect(limit.retryAfter('10.0.0.0')).toBeUndefined(); // the first one, dropped
  });
});
