/**
 * Runs the policies over the desired objects, as kube's ValidatingAdmissionPolicy does over a
 * request: `object` is the object in git, `oldObject` the live one (null on create and when no
 * server is asked), and `git` holds every desired object (`git.teams`, `git.ownedaccesskeys`) so
 * a rule can look across objects. A false result, or an expression that cannot be evaluated
 * against this object, is a violation at the manifest's file:line:col.
 */
import { isCelError, type CelInput } from '@bufbuild/cel';
import type { KubeObject } from '../../api/types.js';
import type { Plural } from '../../client/types.js';
import type { ManifestError } from '../source/manifests.js';
import type { DesiredObject } from '../validate.js';
import { loadPolicies, type Policy, type PolicySource } from './load.js';

/** JSON as CEL sees it: whole numbers are `int` (as kube types integer fields), so `ttl / 86400` works. */
function toCel(value: unknown): CelInput {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCel(v)])) as CelInput;
  return value as CelInput;
}

/** Every violation of every policy; `live` is looked up by plural/name (empty when validating only). */
export function checkPolicies(policies: Policy[], desired: DesiredObject[], live: (plural: Plural, name: string) => KubeObject | undefined = () => undefined): ManifestError[] {
  if (policies.length === 0) return [];
  const git = toCel({
    teams: desired.filter((d) => d.plural === 'teams').map((d) => d.obj),
    ownedaccesskeys: desired.filter((d) => d.plural === 'ownedaccesskeys').map((d) => d.obj),
  });
  const errors: ManifestError[] = [];
  for (const d of desired) {
    const bindings = { object: toCel(d.obj), oldObject: toCel(live(d.plural, d.obj.metadata.name!) ?? null), git };
    for (const p of policies) {
      if (p.match.length > 0 && !p.match.some((m) => m.kind === d.obj.kind && m.selects(d.obj))) continue;
      for (const v of p.validations) {
        const result = v.run(bindings);
        if (result === true) continue;
        const why = isCelError(result) ? ` (the expression could not be evaluated: ${result.message})` : result === false ? '' : ` (the expression gave ${String(result)}, not a bool)`;
        const at = v.fieldPath ? d.manifest.locate(v.fieldPath) : d.manifest;
        errors.push({ file: at.file, line: at.line, column: at.column, message: `${d.obj.kind}/${d.obj.metadata.name} violates policy "${p.name}": ${v.message}${why}` });
      }
    }
  }
  return errors;
}

/** The policy folder's own errors if it has any, else every violation (`oldObject` from `live` when given). */
export async function checkPolicyDir(dir: PolicySource, desired: DesiredObject[], live?: Record<Plural, KubeObject[]>): Promise<ManifestError[]> {
  const { policies, errors } = await loadPolicies(dir);
  if (errors.length > 0) return errors;
  const byKey = new Map(Object.entries(live ?? {}).flatMap(([plural, objects]) => objects.map((o) => [`${plural}/${o.metadata.name}`, o] as const)));
  return checkPolicies(policies, desired, (plural, name) => byKey.get(`${plural}/${name}`));
}
