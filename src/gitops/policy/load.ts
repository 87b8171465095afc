/**
 * Loads Policy objects (`gitops.management.service/v1`, kind Policy) from a folder and compiles
 * their CEL expressions once. Anything wrong with a policy file is an error at its own
 * file:line:col, so a broken policy stops the run instead of silently allowing everything.
 */
import { resolve } from 'node:path';
import { parse, plan, celEnv, type CelInput, type CelResult } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { resourcesFor } from '../../api/resources.js';
import { parseLabelSelector, type Matcher } from '../../api/selectors.js';
import { isJsonMap } from '../../api/types.js';
import { readManifests } from '../source/files.js';
import { readPoliciesAt, type PolicySource } from './at-ref.js';
import { costFuncs, freeIdents, instrument } from './cost.js';
import type { Location, Manifest, ManifestError } from '../source/manifests.js';

export const policyApiVersion = 'gitops.management.service/v1';

export interface Validation {
  expression: string;
  message: string;
  /** Where in the manifest a violation points (`spec.ttl`); the object's first line without it. */
  fieldPath?: string;
  /** Where the expression is written: a refusal for its cost points there. */
  at: Location;
  /**
   * The expression reads `access` (the plan's access change): it is judged once per plan, against
   * that change, not per object, and a violation points at the expression (access-policy.ts).
   */
  usesAccess: boolean;
  /** Evaluates the expression; its cost is charged to the tracker given to withTracker (cost.ts). */
  run: (bindings: Record<string, CelInput>) => CelResult;
}

export interface Policy {
  name: string;
  location: Location;
  /** Kinds it applies to, each with an optional label selector; empty means every kind. */
  match: { kind: string; selects: Matcher }[];
  validations: Validation[];
}

const env = celEnv({ funcs: [...strings, ...costFuncs] });
const kinds = Object.values(resourcesFor()).map((r) => r.kind as string);
/** The fields each level may hold: a misspelt one would otherwise be ignored, and a rule lost. */
const allowed: Record<string, string[]> = { spec: ['match', 'validations'], match: ['kind', 'labelSelector'], validation: ['expression', 'message', 'fieldPath'] };

function unknownFields(value: Record<string, unknown>, level: string, field: string, at: (field: string, message: string) => void): void {
  for (const k of Object.keys(value)) if (!allowed[level]!.includes(k)) at(`${field}.${k}`, `unknown field "${field}.${k}" (expected ${allowed[level]!.join(', ')})`);
}

/** One policy document: its shape, then each expression compiled. */
function compilePolicy(m: Manifest, errors: ManifestError[]): Policy | undefined {
  const at = (field: string | undefined, message: string) => errors.push({ ...(field ? m.locate(field) : m), message });
  const raw = m.object;
  if (raw.apiVersion !== policyApiVersion || raw.kind !== 'Policy') {
    at('kind', `expected kind Policy in ${policyApiVersion}, not ${JSON.stringify(raw.kind ?? '')} in ${JSON.stringify(raw.apiVersion ?? '')}`);
    return undefined;
  }
  const name = isJsonMap(raw.metadata) ? raw.metadata.name : undefined;
  if (typeof name !== 'string' || name === '') {
    at('metadata', 'metadata.name is required: violations are reported by the policy name');
    return undefined;
  }
  const spec = isJsonMap(raw.spec) ? raw.spec : {};
  const before = errors.length;
  unknownFields(spec, 'spec', 'spec', at);
  const match: Policy['match'] = [];
  const rules = spec.match ?? [];
  if (!Array.isArray(rules)) at('spec.match', 'spec.match must be a list of {kind, labelSelector}');
  else
    rules.forEach((r, i) => {
      if (!isJsonMap(r) || typeof r.kind !== 'string') return at(`spec.match[${i}]`, `spec.match[${i}].kind is required (${kinds.join(' or ')})`);
      unknownFields(r, 'match', `spec.match[${i}]`, at);
      if (!kinds.includes(r.kind)) return at(`spec.match[${i}].kind`, `unknown kind ${JSON.stringify(r.kind)}: expected ${kinds.join(' or ')}`);
      if (r.labelSelector !== undefined && typeof r.labelSelector !== 'string') return at(`spec.match[${i}].labelSelector`, 'labelSelector is a string, as kubectl -l takes it');
      try {
        match.push({ kind: r.kind, selects: parseLabelSelector(r.labelSelector as string | undefined) ?? (() => true) });
      } catch (err) {
        at(`spec.match[${i}].labelSelector`, `invalid labelSelector: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
  const validations: Validation[] = [];
  const list = spec.validations;
  if (!Array.isArray(list) || list.length === 0) at(list === undefined ? 'spec' : 'spec.validations', 'spec.validations must list at least one {expression, message}');
  else
    list.forEach((v, i) => {
      const field = `spec.validations[${i}]`;
      if (!isJsonMap(v) || typeof v.expression !== 'string') return at(field, `${field}.expression is required (a CEL expression that is true when the object is allowed)`);
      unknownFields(v, 'validation', field, at);
      try {
        const parsed = parse(v.expression);
        const usesAccess = freeIdents(parsed.expr).has('access');
        instrument(env, parsed.expr);
        const run = plan(env, parsed);
        const message = typeof v.message === 'string' ? v.message : `failed: ${v.expression}`;
        const where = m.locate(`${field}.expression`);
        validations.push({ expression: v.expression, message, ...(typeof v.fieldPath === 'string' ? { fieldPath: v.fieldPath } : {}), at: { file: where.file, line: where.line, column: where.column }, usesAccess, run });
      } catch (err) {
        const why = err instanceof Error ? err.message.replace(/^<input>:/, 'at ') : String(err);
        at(`${field}.expression`, `policy "${name}": the expression does not compile: ${why}`);
      }
    });
  return errors.length > before ? undefined : { name, location: { file: m.file, line: m.line, column: m.column }, match, validations };
}

export type { PolicySource } from './at-ref.js';

/** Every Policy below a folder, on disk or at a git ref (files named relative to `base`, the working directory), or the errors that stop the run. */
export async function loadPolicies(source: PolicySource, base = process.cwd()): Promise<{ policies: Policy[]; errors: ManifestError[] }> {
  const dir = typeof source === 'string' ? source : source.dir;
  const { manifests, errors } = typeof source === 'string' ? await readManifests(resolve(base, dir), resolve(base, dir), resolve(base)) : await readPoliciesAt(source, resolve(base));
  if (errors.length === 0 && manifests.length === 0) errors.push({ file: dir, line: 1, column: 1, message: 'no Policy objects in this folder (--policy)' });
  const policies: Policy[] = [];
  const seen = new Map<string, Location>();
  for (const m of manifests) {
    const p = compilePolicy(m, errors);
    if (!p) continue;
    const first = seen.get(p.name);
    if (first) errors.push({ ...m.locate('metadata.name'), message: `duplicate Policy/${p.name}: also defined at ${first.file}:${first.line}:${first.column}` });
    seen.set(p.name, p.location);
    policies.push(p);
  }
  return { policies, errors };
}
