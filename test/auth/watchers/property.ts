/** The watchers' property, shared by npm test (a few worlds) and npm run test:long (many). */
import fc from 'fast-check';
import { expect } from 'vitest';
import { describeWatchFindings, playWatchers, watchScenario } from './play.js';

/** Plays `numRuns` generated worlds; ESCALATION_MODEL_SEED replays one draw (.ci/run fixes it). */
export async function assertWatchersHold(numRuns: number): Promise<void> {
  const seed = process.env.ESCALATION_MODEL_SEED ? { seed: Number(process.env.ESCALATION_MODEL_SEED) } : {};
  await fc.assert(
    fc.asyncProperty(watchScenario, async (s) => {
      const findings = await playWatchers(s);
      expect(findings, describeWatchFindings(findings)).toEqual([]);
    }),
    { numRuns, endOnFailure: process.env.ESCALATION_MODEL_SHRINK !== '1', ...seed },
  );
}
