/**
 * Polls until something the server does in the background has happened, within a bound.
 *
 * `probe` is tried again while it returns undefined, null or false, or throws; its first other
 * value is returned. Past the bound, the failure names what was awaited and, if the last try
 * threw, why: "timed out after 10000 ms waiting until the key is deleted (last try: ...)".
 * `bound` is the timeout in ms (default 10 s), or { timeoutMs, intervalMs } (default interval 50 ms).
 * Use it for outcomes the test cannot await directly; a clock-driven outcome needs no polling
 * (move the ManualClock instead).
 */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  bound: number | { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const opts = typeof bound === 'number' ? { timeoutMs: bound } : bound;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let lastError: unknown;
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError === undefined ? '' : ` (last try: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
