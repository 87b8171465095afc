/**
 * A job token's single-use record outlives the token by an hour. Each replica judges a token's
 * expiry by its own clock (60 s of leeway); kept only until the leader's clock passed the expiry,
 * the record was gone while a replica whose clock lagged by more still took the token as live and
 * exchanged it a second time (a review found it).
 */
import { describe, expect, it } from 'vitest';
import { TokenUses, useRecordRetentionMs } from '../../src/federation/token-uses.js';
import { MemoryStore } from '../../src/store/backends/memory.js';

describe("a job token's single-use record", () => {
  it('is kept an hour past the token\'s expiry, then collected', async () => {
    const store = new MemoryStore();
    const uses = new TokenUses(store);
    const exp = Date.parse('2026-11-29T12:00:00Z');
    expect(await uses.claim('https://issuer', 'jti-1', exp)).toBe(true);
    expect(await uses.claim('https://issuer', 'jti-1', exp)).toBe(false);
    // The leader's clock five minutes past the expiry: a replica five minutes behind still takes the token as live.
    expect(await uses.collect(exp + 5 * 60_000)).toBe(0);
    expect(await uses.claim('https://issuer', 'jti-1', exp)).toBe(false);
    expect(await uses.collect(exp + useRecordRetentionMs - 1)).toBe(0);
    expect(await uses.collect(exp + useRecordRetentionMs + 1)).toBe(1);
    // Gone: no clock within the hour could still take the token as live.
    expect(await uses.claim('https://issuer', 'jti-1', exp)).toBe(true);
    expect(useRecordRetentionMs).toBe(3_600_000);
    await store.close();
  });
});
