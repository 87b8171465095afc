/**
 * The log tail's window (log-span.ts): whatever the sizes and however records arrive, every record
 * above `windowStart` is in the window, ascending, and the window keeps the last records while they
 * fit both bounds, `windowSize` records and `windowChars` characters of values, and never more than
 * an eighth over either (it drops the oldest in batches). The character bound was found missing by
 * a review: an ordinary key holder's 4,000 writes of a 250 KB key ran the server out of heap.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { appendRecord, spanFrom } from '../../src/store/log/log-span.js';
import type { LogRecord } from '../../src/store/types.js';

const record = (revision: number, chars = 2, prevChars?: number): LogRecord => ({
  type: prevChars === undefined ? 'ADDED' : 'MODIFIED',
  key: `/teams/t${revision}`,
  revision,
  value: 'v'.repeat(chars),
  ...(prevChars === undefined ? {} : { prevValue: 'p'.repeat(prevChars), prevRevision: revision - 1 }),
});

it('holds every record above windowStart, the last that fit windowSize and windowChars at least, an eighth over either at most', () => {
  const step = fc.record({ move: fc.integer({ min: 0, max: 3 }), chars: fc.integer({ min: 0, max: 40 }), prev: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }) });
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 400 }), fc.array(step, { maxLength: 400 }), (windowSize, windowChars, steps) => {
      const span = spanFrom(0);
      span.checked = true;
      const appended: { revision: number; chars: number }[] = [];
      let revision = 0;
      for (const { move, chars, prev } of steps) {
        // 0: a record already read comes again (refused); else the revision moves on by `move`.
        if (move === 0) {
          if (revision > 0) expect(appendRecord(span, record(revision, chars, prev), windowSize, windowChars)).toBe(false);
          continue;
        }
        revision += move;
        expect(appendRecord(span, record(revision, chars, prev), windowSize, windowChars)).toBe(true);
        appended.push({ revision, chars: chars + (prev ?? 0) });
        const kept = span.window.map((r) => r.revision);
        expect(kept).toEqual(appended.filter((r) => r.revision > span.windowStart).map((r) => r.revision));
        const keptChars = span.window.reduce((n, r) => n + r.value.length + (r.prevValue?.length ?? 0), 0);
        expect(span.chars).toBe(keptChars);
        // The last records that fit both bounds are all kept.
        let fit = 0;
        for (let n = 0, i = appended.length - 1; i >= 0 && fit < windowSize && n + appended[i]!.chars <= windowChars; i--, fit++) n += appended[i]!.chars;
        expect(kept.length).toBeGreaterThanOrEqual(fit);
        expect(kept.length).toBeLessThanOrEqual(windowSize + (windowSize >> 3));
        expect(keptChars).toBeLessThanOrEqual(windowChars + windowChars / 8);
        expect(span.head).toBe(revision);
      }
    }),
    { numRuns: 300 },
  );
});
