/** The one reader of whole numbers on the command line: counts, limits, and seconds in time flags. */
import { CliError } from './errors.js';

/** How low a whole number may go, worded as its error says it: `of at least 1` or `above 0`. */
export type Bound = { atLeast: number } | { above: number };

/** The digits of a whole number, or undefined (no sign, no decimals, no exponent: `1e3` is a typo here). */
export function digits(value: string): number | undefined {
  return /^\d+$/.test(value) ? Number(value) : undefined;
}

/** A whole number flag value within `bound`, else the flag's error. */
export function wholeNumber(flag: string, value: string, bound: Bound): number {
  const n = digits(value);
  const ok = n !== undefined && ('atLeast' in bound ? n >= bound.atLeast : n > bound.above);
  if (!ok) throw new CliError(`${flag} must be a whole number ${'atLeast' in bound ? `of at least ${bound.atLeast}` : `above ${bound.above}`}, not "${value}"`);
  return n;
}

const byteUnits = { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 } as const;

/** A size in bytes: a whole number, or one with a binary suffix (512Ki, 32Mi, 1Gi), at least `least`. */
export function byteSize(flag: string, value: string, least: number): number {
  const m = /^(\d{1,12})(Ki|Mi|Gi)?$/.exec(value);
  if (!m) throw new CliError(`${flag} must be a size in bytes or with Ki, Mi or Gi (like 32Mi), not "${value}"`);
  const n = Number(m[1]) * byteUnits[(m[2] ?? '') as keyof typeof byteUnits];
  if (n < least) throw new CliError(`${flag} must be at least ${least / 1024 / 1024}Mi, not "${value}"`);
  return n;
}
