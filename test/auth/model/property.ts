/** The escalation property, shared by npm test (a few worlds) and npm run test:long (many). */
import fc from 'fast-check';
import { expect } from 'vitest';
import { describeFindings, play } from './run.js';
import { ruleStats } from './federation.js';
import { ruleScenario, scenario, signInScenario, type Scenario } from './world.js';
import { requestScenario } from './requests.js';

/**
 * Plays `numRuns` generated worlds; after each accepted write nobody may hold what the writer did
 * not. A failure prints its seed; ESCALATION_MODEL_SEED replays that run (.ci/run fixes one).
 */
export async function assertNoEscalation(numRuns: number, opts: { endOnFailure?: boolean; scenarios?: fc.Arbitrary<Scenario> } = {}): Promise<void> {
  const seed = process.env.ESCALATION_MODEL_SEED ? { seed: Number(process.env.ESCALATION_MODEL_SEED) } : {};
  await fc.assert(
    fc.asyncProperty(opts.scenarios ?? scenario, async (s) => {
      const findings = await play(s);
      expect(findings, describeFindings(findings)).toEqual([]);
    }),
    { numRuns, ...(opts.endOnFailure !== undefined ? { endOnFailure: opts.endOnFailure } : {}), ...seed },
  );
}

/**
 * The same property over sign-in scenarios (world.ts signInScenario): Login keys minted and ended
 * (logout, the provider's refusal), key-setting writes by signed-in keys; besides no escalation,
 * nothing written with a Login key works once that sign-in has ended.
 */
export const assertSignInEnds = (numRuns: number, opts: { endOnFailure?: boolean } = {}) => assertNoEscalation(numRuns, { ...opts, scenarios: signInScenario });

/** The same property over access-request scenarios (requests.ts requestScenario): requests, approvals, break-glass and the clock moving past expiresAt. */
export const assertRequestsBounded = (numRuns: number, opts: { endOnFailure?: boolean } = {}) => assertNoEscalation(numRuns, { ...opts, scenarios: requestScenario });

/**
 * The same property over FederatedCredential scenarios (world.ts ruleScenario): after each accepted
 * rule write, what the rule mints (now, and later) holds nothing its writer did not. Returns how
 * many rule writes were accepted and keys minted and judged, so a run that judged none shows.
 */
export async function assertRulesBounded(numRuns: number, opts: { endOnFailure?: boolean } = {}): Promise<typeof ruleStats> {
  const from = { ...ruleStats };
  await assertNoEscalation(numRuns, { ...opts, scenarios: ruleScenario });
  return { accepted: ruleStats.accepted - from.accepted, minted: ruleStats.minted - from.minted };
}
