/**
 * Time flags: every one takes the duration syntax of src/duration.ts (500ms, 30s, 5m, 1h, 90d,
 * shared with annotations and Action inputs). Flags that took seconds before durations existed
 * still read a bare number as seconds, so existing command lines keep working.
 */
import { durationError, durationMs } from '../duration.js';
import { CliError } from './errors.js';
import { digits } from './flag-values.js';

export { durationMs, formatDuration } from '../duration.js';

/** Milliseconds of a duration flag (above zero), else the flag's error. */
export function parseDuration(flag: string, value: string): number {
  const ms = durationMs(value);
  if (ms === undefined) throw new CliError(durationError(flag, value));
  return ms;
}

/** Milliseconds of a time flag that also takes a bare whole number of seconds (`90` is `90s`), above zero. */
export function parseSecondsOrDuration(flag: string, value: string): number {
  const seconds = digits(value);
  const ms = seconds !== undefined ? seconds * 1000 : durationMs(value);
  if (!ms) throw new CliError(`${flag} must be a whole number of seconds above 0 or a duration such as 30s, 5m, 90d or 500ms, not "${value}"`);
  return ms;
}
