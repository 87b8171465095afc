/** Durations on the command line: 500ms, 30s, 5m, 1h, 90d (the syntax lives in src/duration.ts, shared with annotations). */
import { durationError, durationMs } from '../duration.js';
import { CliError } from './errors.js';

export { durationMs, formatDuration } from '../duration.js';

export function parseDuration(flag: string, value: string): number {
  const ms = durationMs(value);
  if (ms === undefined) throw new CliError(durationError(flag, value));
  return ms;
}
