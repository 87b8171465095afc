/** The escalation model (test/auth/escalation-model.test.ts) over many more worlds: npm run test:long. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeFindings, play } from '../auth/model/run.js';
import { scenario } from '../auth/model/world.js';

const runs = Number(process.env.ESCALATION_MODEL_RUNS ?? 2000);
// A failure prints its seed; ESCALATION_MODEL_SEED replays that run.
const seed = process.env.ESCALATION_MODEL_SEED ? { seed: Number(process.env.ESCALATION_MODEL_SEED) } : {};

describe('no key ever holds more than its maker (model-based, long)', () => {
  it(`holds over ${runs} random worlds and write sequences`, async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const findings = await play(s);
        expect(findings, describeFindings(findings)).toEqual([]);
      }),
      { numRuns: runs, ...seed },
    );
  }, 900_000);
});
