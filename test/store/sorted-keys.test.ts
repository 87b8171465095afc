/**
 * The watch cache's key list (chunked, so inserts and deletes do not copy every key after them)
 * answers as one plain sorted array did: after random adds, deletes and in-order pushes, every
 * range read and every count (a LIST page's keys, its continue point and remainingItemCount)
 * equals the plain array's. Small chunks, so splits and merges happen within a few operations.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SortedKeys } from '../../src/store/cache/sorted-keys.js';

const keyArb = fc.tuple(fc.constantFrom('/a/', '/b/', '/c/'), fc.integer({ min: 0, max: 60 })).map(([p, n]) => p + String(n).padStart(2, '0'));
const boundArb = fc.oneof(keyArb, fc.constantFrom('', '/', '/a/', '/b/', '/b0', '/c/', '/d/', '\uffff'));
const opArb = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('add' as const), key: keyArb }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('push' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('read' as const), start: boundArb, end: boundArb, after: boundArb }) },
);

/** The plain array the chunked list replaced, as it answered. */
function plainRange(keys: string[], start: string, end: string, after: string): string[] {
  return keys.filter((k) => k >= start && k < end && k > after);
}

describe('SortedKeys', () => {
  it('equals a plain sorted array under random adds, deletes, pushes and range reads', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), fc.array(opArb, { maxLength: 300 }), (chunkSize, ops) => {
        const keys = new SortedKeys(chunkSize);
        let plain: string[] = [];
        for (const o of ops) {
          if (o.op === 'add') {
            keys.add(o.key);
            if (!plain.includes(o.key)) plain = [...plain, o.key].sort();
          } else if (o.op === 'delete') {
            keys.delete(o.key);
            plain = plain.filter((k) => k !== o.key);
          } else if (o.op === 'push') {
            // push is only for a key after every key held (a fill in key order).
            const last = plain.at(-1);
            if (last !== undefined && o.key <= last) continue;
            keys.push(o.key);
            plain.push(o.key);
          } else {
            const want = plainRange(plain, o.start, o.end, o.after);
            expect([...keys.range(o.start, o.end, o.after)]).toEqual(want);
            expect(keys.count(o.start, o.end, o.after)).toBe(want.length);
          }
          expect(keys.size).toBe(plain.length);
        }
        expect([...keys.range('', '\uffff', '')]).toEqual(plain);
      }),
      { numRuns: 300 },
    );
  });

  it('a range read across changes resumes after the last key it gave, in the keys as they are', () => {
    const keys = new SortedKeys(2);
    for (const k of ['a', 'c', 'e', 'g', 'i']) keys.add(k);
    const read = keys.range('', '\uffff', '');
    const got = [read.next().value, read.next().value];
    keys.add('b'); // before the read's place: not given
    keys.add('d'); // after it: given
    keys.delete('e');
    for (const k of read) got.push(k);
    expect(got).toEqual(['a', 'c', 'd', 'g', 'i']);
  });
});
