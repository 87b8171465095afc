/**
 * The log tail's window (log-span.ts): whatever the sizes and however records arrive, every record
 * above `windowStart` is in the window, ascending, and the window keeps at least the last
 * `windowSize` records and never more than an eighth over (it drops the oldest in batches).
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { appendRecord, spanFrom } from '../../src/store/log/log-span.js';
import type { LogRecord } from '../../src/store/types.js';

const record = (revision: number): LogRecord => ({ type: 'ADDED', key: `/teams/t${revision}`, revision, value: '{}' });

it('holds every record above windowStart, the last windowSize at least, an eighth over at most', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 64 }), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 400 }), (windowSize, steps) => {
      const span = spanFrom(0);
      span.checked = true;
      const appended: number[] = [];
      let revision = 0;
      for (const step of steps) {
        // 0: a record already read comes again (refused); else the revision moves on by `step`.
        if (step === 0) {
          if (revision > 0) expect(appendRecord(span, record(revision), windowSize)).toBe(false);
          continue;
        }
        revision += step;
        expect(appendRecord(span, record(revision), windowSize)).toBe(true);
        appended.push(revision);
        const kept = span.window.map((r) => r.revision);
        expect(kept).toEqual(appended.filter((r) => r > span.windowStart));
        expect(kept.length).toBeGreaterThanOrEqual(Math.min(appended.length, windowSize));
        expect(kept.length).toBeLessThanOrEqual(windowSize + (windowSize >> 3));
        expect(span.head).toBe(revision);
      }
    }),
    { numRuns: 300 },
  );
});
