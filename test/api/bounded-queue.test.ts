/**
 * The watch queue's bound by weight (api/bounded-queue.ts's WeightBound), on generated sequences
 * of pushes, takes and time: a reader that keeps up is never cut off whatever a burst weighs (the
 * defect of stop 66's first bound, which cut off the watch cache's own watch), and one that does
 * not is cut off before it holds more than the bound or what came within the grace.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedQueue } from '../../src/api/bounded-queue.js';

const max = 1_000;
const graceMs = 5_000;

/** A queue under the weight bound whose clock the test moves, and what it refused with. */
function queue(maxPending = 10_000) {
  let now = 0;
  const errors: string[] = [];
  const q = new BoundedQueue<number>(maxPending, () => {}, (what) => errors.push(what), { max, graceMs, now: () => now });
  return { q, errors, advance: (ms: number) => (now += ms), now: () => now };
}

/** Takes `n` items (or as many as wait) through the iterator, as a reader does. */
async function take(q: BoundedQueue<number>, n: number): Promise<number[]> {
  const it = q[Symbol.asyncIterator]();
  const got: number[] = [];
  for (let i = 0; i < n && q.pending > 0; i++) got.push((await it.next()).value as number);
  return got;
}

const burst = fc.array(fc.integer({ min: 0, max: 3 * max }), { minLength: 1, maxLength: 40 });

describe('a watch queue bounded by weight and age', () => {
  it('never cuts off a reader that takes each burst within the grace, however heavy the burst', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(burst, fc.integer({ min: 0, max: graceMs }), fc.integer({ min: 0, max: 10 * graceMs })), { maxLength: 20 }), async (steps) => {
        const { q, errors, advance } = queue();
        let pushed = 0;
        let taken = 0;
        for (const [weights, readAfter, idle] of steps) {
          for (const w of weights) expect(q.push(pushed++, w)).toBe(true);
          advance(readAfter); // the reader takes the burst within the grace
          taken += (await take(q, Infinity)).length;
          expect(q.weight).toBe(0);
          advance(idle); // nothing waits while nothing comes
        }
        expect(errors).toEqual([]);
        expect(taken).toBe(pushed);
      }),
      { numRuns: 200 },
    );
  });

  it('cuts off a reader that falls behind: it never holds more than the bound or what came within the grace, and says so', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 0, max: 2 * max }), fc.integer({ min: 0, max: graceMs }), fc.nat({ max: 3 })), { minLength: 1, maxLength: 300 }), async (steps) => {
        const { q, errors, advance, now } = queue();
        const pushes: { at: number; weight: number }[] = [];
        for (const [weight, gap, reads] of steps) {
          advance(gap);
          const ok = q.push(0, weight);
          if (!ok) break;
          pushes.push({ at: now(), weight });
          // A slow reader: sometimes takes one, never catches up.
          if (reads === 0) await take(q, 1);
          const recent = pushes.filter((p) => p.at >= now() - graceMs).reduce((s, p) => s + p.weight, 0);
          expect(q.weight).toBeLessThanOrEqual(Math.max(max, recent));
        }
        if (q.closed) {
          expect(errors).toEqual([`more than ${max} characters of events behind for over ${graceMs / 1000} s`]);
          // Refused only past the bound, with something waiting longer than the grace.
          expect(q.weight + steps[pushes.length]![0]).toBeGreaterThan(max);
        } else expect(errors).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('cuts off a reader that stopped at the first push past the bound once its oldest event waited longer than the grace', () => {
    const { q, errors, advance } = queue();
    expect(q.push(1, 600)).toBe(true);
    expect(q.push(2, 600)).toBe(true); // past the bound, but nothing waited long: a burst
    advance(graceMs); // exactly the grace: still within it
    expect(q.push(3, 1)).toBe(true);
    advance(1);
    expect(q.push(4, 1)).toBe(false);
    expect(q.closed).toBe(true);
    expect(errors).toEqual([`more than ${max} characters of events behind for over 5 s`]);
  });

  it('keeps time with the process clock when given none', () => {
    const q = new BoundedQueue<number>(10, () => {}, (what) => new Error(what), { max, graceMs });
    expect(q.push(1, 2 * max)).toBe(true);
    expect(q.push(2, 2 * max)).toBe(true); // the first waited moments, not the grace
    expect(q.weight).toBe(4 * max);
  });

  it('a stale queue under the bound is not cut off; the count bound still holds', () => {
    const { q, errors, advance } = queue(3);
    expect(q.push(1, 100)).toBe(true);
    advance(10 * graceMs);
    expect(q.push(2, 100)).toBe(true);
    expect(q.push(3, 100)).toBe(true);
    expect(q.push(4, 0)).toBe(false);
    expect(errors).toEqual(['more than 3 events behind']);
  });

  it('room waits for the weight as well as the count, and a closed queue lets the producer go', async () => {
    const { q } = queue();
    q.push(1, 400);
    q.push(2, 400);
    let roomy = false;
    void q.room(10, 500).then(() => (roomy = true));
    await Promise.resolve();
    expect(roomy).toBe(false); // two items is under the count, 800 is over the weight
    await take(q, 1);
    await Promise.resolve();
    expect(roomy).toBe(true);
    expect(q.hasRoom(0, Infinity)).toBe(false);
    q.end();
    expect(q.hasRoom(0, 0)).toBe(true);
  });
});
