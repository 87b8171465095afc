/**
 * The model-based escalation test: random small worlds, random writes by random keys against the
 * real server; after each accepted write, no key may hold a permission (over a fixed probe set)
 * that it did not hold before and the writer did not hold. test/long runs many more cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeFindings, play } from './model/run.js';
import { scenario } from './model/world.js';

const modelRuns = Number(process.env.ESCALATION_MODEL_RUNS ?? 120);
// A failure prints its seed; ESCALATION_MODEL_SEED replays that run (.ci/run fixes one).
const seed = process.env.ESCALATION_MODEL_SEED ? { seed: Number(process.env.ESCALATION_MODEL_SEED) } : {};

describe('no key ever holds more than its maker (model-based)', () => {
  it(`holds over ${modelRuns} random worlds and write sequences`, async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const findings = await play(s);
        expect(findings, describeFindings(findings)).toEqual([]);
      }),
      { numRuns: modelRuns, endOnFailure: process.env.ESCALATION_MODEL_SHRINK !== '1', ...seed },
    );
  }, 120_000);
});
