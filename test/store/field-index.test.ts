/**
 * A field index (src/store/cache/field-index.ts) holds a value's keys as a string, then an array,
 * then a Set as more keys share it: whatever the form, after any sequence of adds and deletes it
 * answers as a map from value to a set of keys would. Sequences over up to 60 keys cross the
 * array's bound both ways; keys are added twice and deleted when absent.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FieldIndex } from '../../src/store/cache/field-index.js';

const keys = Array.from({ length: 60 }, (_, i) => `/ownedaccesskeys/k${i}`);
const values = ['ann', 'team:ops'];
const opArb = fc.record({ add: fc.integer({ min: 0, max: 4 }).map((i) => i > 0), key: fc.constantFrom(...keys), value: fc.constantFrom(...values) });

describe('a field index', () => {
  it('answers as a map of sets over adds and deletes that cross the array bound both ways', () => {
    let largest = 0;
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 150, maxLength: 500 }), (ops) => {
        const index = new FieldIndex();
        const model = new Map<string, Set<string>>();
        for (const op of ops) {
          const set = model.get(op.value) ?? new Set<string>();
          if (op.add) {
            index.add(op.key, op.value);
            set.add(op.key);
          } else {
            index.delete(op.key, op.value);
            set.delete(op.key);
          }
          model.set(op.value, set);
          largest = Math.max(largest, set.size);
          for (const v of values) {
            const want = [...(model.get(v) ?? [])].sort();
            expect([...index.lookup(v)].sort(), `${v} after ${op.add ? 'adding' : 'deleting'} ${op.key}`).toEqual(want);
            expect(index.size(v)).toBe(want.length);
          }
        }
      }),
      { numRuns: 100 },
    );
    // Some runs held more keys under one value than an array holds (32): the Set was used too.
    expect(largest).toBeGreaterThan(32);
  });

  it("a lookup's answer is a copy: changing the index afterwards does not change it", () => {
    const index = new FieldIndex();
    for (const k of keys.slice(0, 5)) index.add(k, 'ann');
    const before = index.lookup('ann');
    index.delete(keys[0]!, 'ann');
    index.add(keys[10]!, 'ann');
    expect([...before].sort()).toEqual(keys.slice(0, 5).sort());
  });
});
