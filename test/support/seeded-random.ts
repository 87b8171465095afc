/**
 * Random choices a failure can replay: a seed from TEAMKEYS_TEST_SEED, or a fixed default, so a run
 * is the same run until someone asks for another. Put the seed in the test's name (or its failure
 * message) so a failing run says how to replay it: `TEAMKEYS_TEST_SEED=<seed> npx vitest run <file>`.
 */

/** The seed of this run: TEAMKEYS_TEST_SEED if set (an integer), else `fallback`. */
export function testSeed(fallback: number): number {
  const raw = process.env.TEAMKEYS_TEST_SEED;
  if (raw === undefined || raw === '') return fallback;
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`TEAMKEYS_TEST_SEED must be an integer, not ${JSON.stringify(raw)}`);
  return seed;
}

/** A generator of numbers in [0, 1) determined by `seed` (mulberry32: small, fast, good enough for picking test cases). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
