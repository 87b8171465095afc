/**
 * Runs the policies over the desired objects, as kube's ValidatingAdmissionPolicy does over a
 * request: `object` is the object in git, `oldObject` the live one (null on create and when no
 * server is asked), and `git` holds every desired object (`git.teams`, `git.ownedaccesskeys`) so
 * a rule can look across objects, with lookups by name and by user so that it need not scan them
 * (see git-bindings.ts). A false result, or an expression that cannot be evaluated against this
 * object, is a violation at the manifest's file:line:col; a run that spends a budget of cost.ts is
 * refused at the expression's own file:line:col.
 */
import { isCelError } from '@bufbuild/cel';
import type { KubeObject } from '../../api/types.js';
import type { Plural } from '../../client/types.js';
import type { ManifestError } from '../source/manifests.js';
import type { DesiredObject } from '../validate.js';
import { CostTracker, defaultPolicyBudget, withTracker, type Exceeded, type PolicyBudget } from './cost.js';
import { gitBindings, toCel } from './git-bindings.js';
import { loadPolicies, type Policy, type PolicySource, type Validation } from './load.js';

const spent: Record<Exceeded['budget'], (limit: number) => string> = {
  perEvaluation: (n) => `the cost limit of one evaluation (${n}, kube-apiserver's per-call limit for CEL rules)`,
  perObject: (n) => `the cost budget of one object (${n}, kube-apiserver's budget for one request)`,
  perRun: (n) => `the cost budget of a policy run (${n})`,
  cpuSeconds: (n) => `the time budget of a policy run (${n} CPU seconds)`,
  heapMiB: (n) => `the memory budget of a policy run (${n} MiB of heap)`,
};

/** The refusal of a run that spent a budget, at the expression that was running. */
function refusal(p: Policy, v: Validation, d: DesiredObject, exceeded: Exceeded): ManifestError {
  const message =
    `policy "${p.name}" exceeded ${spent[exceeded.budget](exceeded.limit)} while checking ${d.obj.kind}/${d.obj.metadata.name} ` +
    `(${d.manifest.file}:${d.manifest.line}), so no policy result stands: write the rule so that its cost does not grow with the size of the source ` +
    '(look objects up in git.teamsByName or git.teamsByUser instead of scanning git.teams inside a rule)';
  return { ...v.at, message };
}

/** Every violation of every policy, and the cost spent; the run stops at the first budget spent. */
export function runPolicies(policies: Policy[], desired: DesiredObject[], live: (plural: Plural, name: string) => KubeObject | undefined = () => undefined, budget: PolicyBudget = defaultPolicyBudget): { errors: ManifestError[]; cost: number } {
  if (policies.length === 0) return { errors: [], cost: 0 };
  const tracker = new CostTracker(budget);
  const git = gitBindings(desired);
  const errors: ManifestError[] = [];
  for (const d of desired) {
    const bindings = { object: toCel(d.obj), oldObject: toCel(live(d.plural, d.obj.metadata.name!) ?? null), git };
    tracker.object = 0;
    for (const p of policies) {
      if (p.match.length > 0 && !p.match.some((m) => m.kind === d.obj.kind && m.selects(d.obj))) continue;
      for (const v of p.validations) {
        // A rule about the plan's access change is judged once per plan (access-policy.ts).
        if (v.usesAccess) continue;
        tracker.evaluation = 0;
        const result = withTracker(tracker, () => v.run(bindings));
        if (tracker.exceeded) return { errors: [...errors, refusal(p, v, d, tracker.exceeded)], cost: tracker.run };
        if (result === true) continue;
        const why = isCelError(result) ? ` (the expression could not be evaluated: ${result.message})` : result === false ? '' : ` (the expression gave ${String(result)}, not a bool)`;
        const at = v.fieldPath ? d.manifest.locate(v.fieldPath) : d.manifest;
        errors.push({ file: at.file, line: at.line, column: at.column, message: `${d.obj.kind}/${d.obj.metadata.name} violates policy "${p.name}": ${v.message}${why}` });
      }
    }
  }
  return { errors, cost: tracker.run };
}

/** Every violation of every policy (see runPolicies). */
export function checkPolicies(policies: Policy[], desired: DesiredObject[], live?: (plural: Plural, name: string) => KubeObject | undefined, budget?: PolicyBudget): ManifestError[] {
  return runPolicies(policies, desired, live, budget).errors;
}

/** The policy folder's own errors if it has any, else every violation (`oldObject` from `live` when given). */
export async function checkPolicyDir(dir: PolicySource, desired: DesiredObject[], live?: Record<Plural, KubeObject[]>): Promise<ManifestError[]> {
  return (await runPolicyDir(dir, desired, live)).errors;
}

/** As checkPolicyDir, with the policies loaded (the plan judges its access change with them after planning). */
export async function runPolicyDir(dir: PolicySource, desired: DesiredObject[], live?: Record<Plural, KubeObject[]>): Promise<{ errors: ManifestError[]; policies: Policy[] }> {
  const { policies, errors } = await loadPolicies(dir);
  if (errors.length > 0) return { errors, policies: [] };
  const byKey = new Map(Object.entries(live ?? {}).flatMap(([plural, objects]) => objects.map((o) => [`${plural}/${o.metadata.name}`, o] as const)));
  return { errors: checkPolicies(policies, desired, (plural, name) => byKey.get(`${plural}/${name}`)), policies };
}
