/**
 * The one duration syntax (500ms, 30s, 5m, 1h, 90d), for flags, Action inputs and annotations
 * alike; src/cli/duration.ts wraps it with the CLI's error. Neutral: loads nothing.
 */
const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a duration, or undefined when `value` is not one (or is zero). */
export function durationMs(value: string): number | undefined {
  const m = value.match(/^(\d+)(ms|s|m|h|d)$/);
  if (!m || Number(m[1]) === 0) return undefined;
  return Number(m[1]) * units[m[2]!]!;
}

/** What a bad duration is told: `--warn-expiry must be a duration such as ...`. */
export const durationError = (what: string, value: string) => `${what} must be a duration such as 30s, 5m, 90d or 500ms, not "${value}"`;

/** A duration as the syntax writes it, in its largest whole unit: 2592000000 -> 30d. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** An age for reports, rounded down to its largest unit: 31d, 5h, 12m, 40s. */
export function formatAge(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size) return `${Math.floor(ms / size)}${unit}`;
  }
  return '0s';
}
