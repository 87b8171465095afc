/** The escalation model (test/auth/escalation-model.test.ts) over many more worlds: npm run test:long. */
import { describe, it } from 'vitest';
import { assertNoEscalation, assertRequestsBounded, assertRulesBounded, assertSignInEnds } from '../auth/model/property.js';

const runs = Number(process.env.ESCALATION_MODEL_RUNS ?? 2000);
const signInRuns = Number(process.env.ESCALATION_SIGNIN_RUNS ?? 500);
const ruleRuns = Number(process.env.ESCALATION_RULE_RUNS ?? 500);
const requestRuns = Number(process.env.ESCALATION_REQUEST_RUNS ?? 300);

describe('no key ever holds more than its maker (model-based, long)', () => {
  it(`holds over ${runs} random worlds and write sequences`, async () => {
    await assertNoEscalation(runs);
  }, 900_000);

  it(`nothing written with a Login key outlives its sign-in over ${signInRuns} random worlds`, async () => {
    await assertSignInEnds(signInRuns);
  }, 900_000);

  it(`no AccessRequest approval gives more than its approver holds, and nothing outlives expiresAt, over ${requestRuns} random worlds`, async () => {
    await assertRequestsBounded(requestRuns);
  }, 900_000);

  it(`no FederatedCredential mints more than its writer could have created over ${ruleRuns} random worlds`, async () => {
    await assertRulesBounded(ruleRuns);
  }, 900_000);
});
