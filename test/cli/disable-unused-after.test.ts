/** serve --disable-unused-after has a floor: uses are recorded at most once a minute, so a window shorter than an hour would disable keys in use. */
import { describe, expect, it } from 'vitest';
import { disableUnusedAfterMs } from '../../src/cli/serve-config.js';

describe('serve --disable-unused-after', () => {
  it('refuses less than an hour with a clear error, and takes an hour or more', () => {
    for (const v of ['1ms', '500ms', '30s', '59m']) expect(() => disableUnusedAfterMs(v)).toThrow(/--disable-unused-after must be at least 1h/);
    expect(disableUnusedAfterMs('1h')).toBe(3_600_000);
    expect(disableUnusedAfterMs('90d')).toBe(90 * 86_400_000);
    expect(() => disableUnusedAfterMs('90 days')).toThrow(/must be a duration/);
  });
});
