/**
 * A `teamkeys serve` whose event loop is watched (loop-probe.mjs), and requests measured by how
 * long they held it: the main thread's CPU time while its timers were late. The machine the tests
 * run on is shared, and even CPU time stretches there (caches, frequency); so a request that seems
 * to hold the loop past the bound is sent again, and only a hold every attempt repeats counts.
 */
import { fileURLToPath } from 'node:url';
import { startServe, type Served } from './serve-process.js';

export { send } from './raw-http.js';

/**
 * The most main-thread CPU time one request may hold the event loop for. A quiet machine's heaviest
 * row (a 30,000-user server-side apply, 528 KB) holds it 50-70 ms (measured under a load average of
 * 17 on 2 cores: 70 ms); the regressions these tests keep out held it 1 s (JSON nested a million
 * deep), 1.5 s (YAML's quadratic key check) and 7.5 s (a quadratic list merge). Ten times the quiet
 * reading, so a loaded machine's stretched CPU time never crosses it and each regression still does.
 */
export const holdBoundMs = 700;

const probe = fileURLToPath(new URL('./loop-probe.mjs', import.meta.url));

export async function startProbedServe(args: string[] = []): Promise<Served> {
  const nodeOptions = `${process.env.NODE_OPTIONS ?? ''} --import ${probe}`.trim();
  return startServe(['--insecure-http', '--log-level', 'warn', ...args], { env: { NODE_OPTIONS: nodeOptions } });
}

/**
 * The longest hold the probe reported after stderr offset `from`: the main thread's CPU time over
 * the stretch where the probe could read it (the work that held the loop), else the wall time.
 */
function longestHold(served: Served, from: number): number {
  let longest = 0;
  for (const m of served.stderr().slice(from).matchAll(/^loop-hold (\d+) (-?\d+)$/gm)) {
    const cpu = Number(m[2]);
    longest = Math.max(longest, cpu >= 0 ? cpu : Number(m[1]));
  }
  return longest;
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` and reports the longest event-loop hold of the server meanwhile (the probe reports late, so wait a little). */
export async function measured<T>(served: Served, fn: () => Promise<T>): Promise<{ result: T; holdMs: number }> {
  const from = served.stderr().length;
  const result = await fn();
  await settle(30);
  return { result, holdMs: longestHold(served, from) };
}

/**
 * The hold a request repeats: measured up to `tries` times while it stays over `boundMs`, the
 * smallest reading wins. Returns the last result.
 */
export async function steadyHold<T>(served: Served, fn: () => Promise<T>, boundMs = holdBoundMs, tries = 3): Promise<{ result: T; holdMs: number }> {
  let best = Infinity;
  let last: T | undefined;
  for (let i = 0; i < tries; i++) {
    const { result, holdMs } = await measured(served, fn);
    last = result;
    best = Math.min(best, holdMs);
    if (best <= boundMs) break;
  }
  return { result: last as T, holdMs: best };
}
