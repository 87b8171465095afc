/**
 * The key health sweep's memory of the keys it warned of (src/server/warned-keys.ts) holds two
 * hashes per uid, not the uid, and answers as a map of uids would: on generated sequences of
 * sweeps (complete, cut short, or on a replica that stopped leading), each key is "known" exactly
 * when a map from uid to the last sweep that saw it says so. The uids include pairs whose first
 * hash meets and whose second does not, found by search, so the exact side is exercised too.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WarnedKeys, hashesOf } from '../../src/server/warned-keys.js';

/** Uids in pairs whose first hashes are equal and second hashes differ (a birthday search over random uids). */
function collidingPairs(wanted: number): string[] {
  const byFirst = new Map<number, string>();
  const pairs: string[] = [];
  for (let i = 0; i < 400_000 && pairs.length < wanted * 2; i++) {
    const uid = randomUUID();
    const [first, second] = hashesOf(uid);
    const other = byFirst.get(first);
    if (other !== undefined && hashesOf(other)[1] !== second) pairs.push(other, uid);
    else byFirst.set(first, uid);
  }
  return pairs;
}

type Step = { kind: 'sweep'; seen: number[]; complete: boolean } | { kind: 'clear' };

describe('the keys warned of', () => {
  const pairs = collidingPairs(3);
  const pool = [...pairs, ...Array.from({ length: 10 }, () => randomUUID())];

  it('the search found uids whose first hashes meet (else the exact side would go untested)', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(4);
    expect(hashesOf(pairs[0]!)[0]).toBe(hashesOf(pairs[1]!)[0]);
    expect(hashesOf(pairs[0]!)[1]).not.toBe(hashesOf(pairs[1]!)[1]);
  });

  it('answers "known" as a map from uid to the last sweep that found it, over generated sweeps', () => {
    const step: fc.Arbitrary<Step> = fc.oneof(
      { weight: 8, arbitrary: fc.record({ kind: fc.constant('sweep' as const), seen: fc.array(fc.integer({ min: 0, max: pool.length - 1 }), { maxLength: pool.length }), complete: fc.boolean() }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const warned = new WarnedKeys();
        const model = new Map<string, number>();
        let sweep = 0;
        for (const s of steps) {
          if (s.kind === 'clear') {
            warned.clear();
            model.clear();
            continue;
          }
          sweep++;
          for (const i of s.seen) {
            const uid = pool[i]!;
            expect(warned.note(uid, sweep)).toBe(model.has(uid));
            model.set(uid, sweep);
          }
          if (!s.complete) continue;
          warned.forgetUnseen(sweep);
          for (const [uid, seen] of model) if (seen !== sweep) model.delete(uid);
          expect(warned.size).toBe(model.size);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a pair meeting in the first hash is remembered and forgotten one key at a time', () => {
    const [a, b] = pairs as [string, string];
    const warned = new WarnedKeys();
    expect(warned.note(a, 1)).toBe(false);
    expect(warned.note(b, 1)).toBe(false);
    expect(warned.note(b, 1)).toBe(true);
    warned.forgetUnseen(1);
    expect(warned.size).toBe(2);
    // Sweep 2 finds only b: a leaves, b stays known; a coming back is new again.
    expect(warned.note(b, 2)).toBe(true);
    warned.forgetUnseen(2);
    expect(warned.size).toBe(1);
    expect(warned.note(a, 3)).toBe(false);
    expect(warned.note(b, 3)).toBe(true);
  });
});
