/**
 * The model-based escalation test: random small worlds, random writes by random keys against the
 * real server; after each accepted write, no key may hold a permission (over a fixed probe set)
 * that it did not hold before and the writer did not hold; and with sign-in (Login keys minted,
 * ended by logout or the provider's refusal, keys rotated, PUT, patched or re-enabled with them),
 * nothing written with a Login key works once that sign-in has ended; and no FederatedCredential, once
 * written, mints a key holding what its writer did not (issue 34); and in worlds whose Teams declare
 * approvers (often lacking what the team confers), required approvals and break-glass users, no
 * approval gives more than its approver holds or counts twice or by its requester, and once the
 * model's clock passes expiresAt nothing the request granted works (issue 36, model/requests.ts). test/long runs many more cases.
 */
import { describe, expect, it } from 'vitest';
import { assertNoEscalation, assertRequestsBounded, assertRulesBounded, assertSignInEnds } from './model/property.js';

const modelRuns = Number(process.env.ESCALATION_MODEL_RUNS ?? 80);
const signInRuns = Number(process.env.ESCALATION_SIGNIN_RUNS ?? 40);
const requestRuns = Number(process.env.ESCALATION_REQUEST_RUNS ?? 40);
const ruleRuns = Number(process.env.ESCALATION_RULE_RUNS ?? 40);

describe('no key ever holds more than its maker (model-based)', () => {
  it(`holds over ${modelRuns} random worlds and write sequences`, async () => {
    await assertNoEscalation(modelRuns, { endOnFailure: process.env.ESCALATION_MODEL_SHRINK !== '1' });
  }, 120_000);

  it(`nothing written with a Login key works once its sign-in ends, over ${signInRuns} random worlds of sign-ins and key-setting writes`, async () => {
    await assertSignInEnds(signInRuns, { endOnFailure: process.env.ESCALATION_MODEL_SHRINK !== '1' });
  }, 120_000);

  it(`no AccessRequest approval gives more than its approver holds, and nothing outlives expiresAt, over ${requestRuns} random worlds of requests and approvals`, async () => {
    await assertRequestsBounded(requestRuns, { endOnFailure: process.env.ESCALATION_MODEL_SHRINK !== '1' });
  }, 120_000);

  it(`no FederatedCredential mints more than its writer could have created, now or after every ttl, over ${ruleRuns} random worlds of rule writes`, async () => {
    const judged = await assertRulesBounded(ruleRuns, { endOnFailure: process.env.ESCALATION_MODEL_SHRINK !== '1' });
    // The property judged real mints, not only refusals.
    expect(judged.minted).toBeGreaterThan(ruleRuns / 8);
  }, 120_000);
});
