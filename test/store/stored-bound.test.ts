/**
 * The stored size bound's rule (store/encode.ts boundedSize), over sizes around it: a client write
 * never ends past the bound unless the object was stored past it and the write does not grow it;
 * the server's own writes may go 4 KiB past, a fixed ceiling, so no sequence of writes climbs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedSize, maxStoredObjectBytes as max } from '../../src/store/encode.js';
import { isStorageError } from '../../src/store/errors.js';

const text = (bytes: number) => 'x'.repeat(bytes);
const obj = { metadata: {} };
const allowed = (bytes: number, stored: number | undefined, server: boolean) => {
  try {
    boundedSize('/k', text(bytes), obj, stored === undefined ? undefined : text(stored), server);
    return true;
  } catch (err) {
    if (isStorageError(err, 'TooLarge')) return false;
    throw err;
  }
};

describe('the stored size bound', () => {
  it('names what it refuses', () => {
    expect(() => boundedSize('/k', text(max + 1), obj)).toThrow(`the object would be stored as ${max + 1} bytes, more than the limit of ${max}; its managedFields take 2 of them`);
  });

  it('client writes end under the bound, or keep an object stored over it before; server writes under the bound and 4 KiB', () => {
    expect(allowed(max, max, false)).toBe(true);
    expect(allowed(max + 1, max, false)).toBe(false);
    expect(allowed(max + 100, max + 200, false)).toBe(false); // pushed past by a server write: back under the bound first
    expect(allowed(max + 4096, max, true)).toBe(true);
    expect(allowed(max + 4097, max + 4096, true)).toBe(false); // no climbing on the server's allowance either
    expect(allowed(max + 10_000, max + 10_000, false)).toBe(true); // stored over it before the bound: kept
    expect(allowed(max + 10_001, max + 10_000, false)).toBe(false);
    expect(allowed(max + 14_000, max + 10_000, true)).toBe(true);
  });

  it('no sequence of client and server writes climbs past the bound and its 4 KiB', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: -3000, max: 5000 }), fc.boolean()), { maxLength: 30 }), (steps) => {
        let stored = max - 50;
        for (const [delta, server] of steps) {
          const next = stored + delta;
          if (allowed(next, stored, server)) stored = next;
          expect(stored).toBeLessThanOrEqual(max + 4096);
        }
      }),
      { numRuns: 100 },
    );
  });
});
