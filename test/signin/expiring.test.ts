/**
 * The in-memory entries of sign-ins under way and of the token exchange's charged tokens
 * (signin/pending.ts Expiring): on generated puts, takes, peeks and clock steps, each answers as a
 * plain model does (an entry lives ttl from its last put, is taken once, the oldest put goes first
 * past the maximum), and after a put nothing lapsed is held. The sweep stops at the first live
 * entry instead of walking all 10,000 on every put (found by a review), which holds only if the
 * map's order is the order entries lapse in: a second put moves an entry to the end.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { Expiring } from '../../src/signin/pending.js';

type Step = { op: 'put' | 'take' | 'peek'; id: string } | { op: 'wait'; ms: number };

it('answers as the model does, and holds nothing lapsed after a put', () => {
  const id = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ op: fc.constantFrom('put' as const, 'take' as const, 'peek' as const), id }),
    fc.record({ op: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 40 }) }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 5 }), fc.array(step, { maxLength: 200 }), (ttl, max, steps) => {
      let now = 0;
      const e = new Expiring<number>(ttl, max, () => now);
      // The model: id -> [value, until], in order of last put.
      const model = new Map<string, [number, number]>();
      steps.forEach((s, n) => {
        if (s.op === 'wait') now += s.ms;
        else if (s.op === 'put') {
          for (const [k, [, until]] of model) if (until < now) model.delete(k);
          model.delete(s.id);
          if (model.size >= max) model.delete(model.keys().next().value!);
          model.set(s.id, [n, now + ttl]);
          e.put(s.id, n);
          expect(e.size).toBe(model.size);
        } else {
          const held = model.get(s.id);
          const live = held && held[1] >= now ? held[0] : undefined;
          if (s.op === 'take') {
            model.delete(s.id);
            expect(e.take(s.id)).toBe(live);
          } else expect(e.peek(s.id)).toBe(live);
        }
      });
    }),
    { numRuns: 500 },
  );
});
