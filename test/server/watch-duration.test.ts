/** How long a watch lasts: kube-apiserver's jittered --min-request-timeout, which timeoutSeconds may only shorten. */
import { describe, expect, it } from 'vitest';
import { watchDurationMs } from '../../src/server/watch/watch-limits.js';

describe('watchDurationMs', () => {
  const rows: [string, number | undefined, number, number, number][] = [
    // name, timeoutSeconds, minRequestTimeout, random(), expected ms
    ['not asked: the jitter picks in [min, 2*min)', undefined, 1800, 0, 1_800_000],
    ['not asked, the top of the jitter', undefined, 1800, 0.999, 3_598_200],
    ['0 counts as not asked, as in kube', 0, 1800, 0.5, 2_700_000],
    ['a shorter timeoutSeconds wins', 60, 1800, 0.5, 60_000],
    ['a longer timeoutSeconds is capped by the jitter', 3600 * 24 * 30, 1800, 0.25, 2_250_000],
    ['a small --min-request-timeout', 3600, 1, 0.5, 1_500],
  ];
  it.each(rows)('%s', (_name, timeoutSeconds, min, random, expected) => {
    expect(watchDurationMs(timeoutSeconds, min, () => random)).toBeCloseTo(expected, 6);
  });
});
