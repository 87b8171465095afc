/**
 * The one duration syntax of the command line and the annotations: 500ms, 30s, 5m, 1h, 90d.
 * Neutral (no CLI or gitops error type), so flags and manifests read durations the same way.
 */
const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The duration in milliseconds, or undefined when `value` is not one (or is zero). */
export function durationMs(value: string): number | undefined {
  const m = value.match(/^(\d+)(ms|s|m|h|d)$/);
  if (!m || Number(m[1]) === 0) return undefined;
  return Number(m[1]) * units[m[2]!]!;
}

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
