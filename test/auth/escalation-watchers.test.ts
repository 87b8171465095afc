/**
 * The escalation model's watchers: random small worlds of teams and keys, a watch of each kind
 * opened with every key, random writes; every event every watcher received must have been readable
 * by its key at that event's revision, an object leaving a watcher's view must arrive as the
 * version it could read, and a key that stops authenticating must have its watches ended.
 * ESCALATION_MODEL_SEED replays one draw (.ci/run fixes it); ESCALATION_WATCHERS_RUNS sets the count.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeWatchFindings, playWatchers, watchScenario } from './watchers/play.js';

const runs = Number(process.env.ESCALATION_WATCHERS_RUNS ?? 8);

describe('no watcher sees more than its key (model-based)', () => {
  it(`holds over ${runs} random worlds and write sequences`, async () => {
    const seed = process.env.ESCALATION_MODEL_SEED ? { seed: Number(process.env.ESCALATION_MODEL_SEED) } : {};
    await fc.assert(
      fc.asyncProperty(watchScenario, async (s) => {
        const findings = await playWatchers(s);
        expect(findings, describeWatchFindings(findings)).toEqual([]);
      }),
      { numRuns: runs, endOnFailure: process.env.ESCALATION_MODEL_SHRINK !== '1', ...seed },
    );
  }, 120_000);
});
