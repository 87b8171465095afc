/**
 * Policies over the plan's access change: a validation whose expression reads `access` is judged
 * once per plan, with `access.gains` and `access.losses` (each entry: identity, identityKind, who,
 * verb, resource, name, object, role, via) and `git` as object rules see it. A false result fails
 * the plan at the expression's own file:line:col, since the rule, not any one manifest, refused.
 * Object rules (evaluate.ts) skip these; `validate` judges none of them (it asks no server).
 */
import { isCelError } from '@bufbuild/cel';
import type { AccessChange } from '../plan/access-change.js';
import type { ManifestError } from '../source/manifests.js';
import type { DesiredObject } from '../validate.js';
import { CostTracker, defaultPolicyBudget, withTracker, type PolicyBudget } from './cost.js';
import { gitBindings, toCel } from './git-bindings.js';
import type { Policy } from './load.js';

/** Every violation of a rule about the access change, at the rule. */
export function checkAccessPolicies(policies: Policy[], change: AccessChange, desired: DesiredObject[], budget: PolicyBudget = defaultPolicyBudget): ManifestError[] {
  const rules = policies.flatMap((p) => p.validations.filter((v) => v.usesAccess).map((v) => ({ p, v })));
  if (rules.length === 0) return [];
  const tracker = new CostTracker(budget);
  const bindings = { access: toCel({ gains: change.gains, losses: change.losses }), git: gitBindings(desired), object: null, oldObject: null };
  const errors: ManifestError[] = [];
  for (const { p, v } of rules) {
    tracker.evaluation = 0;
    tracker.object = 0;
    const result = withTracker(tracker, () => v.run(bindings));
    if (tracker.exceeded) return [...errors, { ...v.at, message: `policy "${p.name}" exceeded its cost budget (${tracker.exceeded.budget}, ${tracker.exceeded.limit}) while judging the plan's access change, so no policy result stands` }];
    if (result === true) continue;
    const why = isCelError(result) ? ` (the expression could not be evaluated: ${result.message})` : result === false ? '' : ` (the expression gave ${String(result)}, not a bool)`;
    errors.push({ ...v.at, message: `the plan's access change violates policy "${p.name}": ${v.message}${why}` });
  }
  return errors;
}
