/**
 * The model-based escalation test: random small worlds, random writes by random keys against the
 * real server; after each accepted write, no key may hold a permission (over a fixed probe set)
 * that it did not hold before and the writer did not hold. test/long runs many more cases.
 */
import { describe, it } from 'vitest';
import { assertNoEscalation } from './model/property.js';

const modelRuns = Number(process.env.ESCALATION_MODEL_RUNS ?? 120);

describe('no key ever holds more than its maker (model-based)', () => {
  it(`holds over ${modelRuns} random worlds and write sequences`, async () => {
    await assertNoEscalation(modelRuns, { endOnFailure: process.env.ESCALATION_MODEL_SHRINK !== '1' });
  }, 120_000);
});
