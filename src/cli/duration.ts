/** Durations on the command line: 500ms, 30s, 5m, 1h, 90d. */
import { CliError } from './errors.js';

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(flag: string, value: string): number {
  const m = value.match(/^(\d+)(ms|s|m|h|d)$/);
  if (!m || Number(m[1]) === 0) throw new CliError(`${flag} must be a duration such as 30s, 5m, 90d or 500ms, not "${value}"`);
  return Number(m[1]) * units[m[2]!]!;
}
