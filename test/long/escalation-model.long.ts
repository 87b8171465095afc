/** The escalation model (test/auth/escalation-model.test.ts) over many more worlds: npm run test:long. */
import { describe, it } from 'vitest';
import { assertNoEscalation } from '../auth/model/property.js';

const runs = Number(process.env.ESCALATION_MODEL_RUNS ?? 2000);

describe('no key ever holds more than its maker (model-based, long)', () => {
  it(`holds over ${runs} random worlds and write sequences`, async () => {
    await assertNoEscalation(runs);
  }, 900_000);
});
