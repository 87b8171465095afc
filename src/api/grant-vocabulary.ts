/**
 * The words a Team's grants are written in: the management roles `spec.clusterRoles` can name and
 * the verbs of `spec.access` rules. auth/roles.ts says what each role allows (and is checked
 * against this list); the reconciler refuses other words and the server warns about them.
 */
import { isJsonMap, type KubeObject } from './types.js';

export const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;
/** The access-rule verb that stands for every verb. */
export const allVerbs = '*';

export const managementRoleNames = ['management-admin', 'teams-admin', 'teams-viewer', 'teams-creator', 'accesskeys-admin', 'impersonator'] as const;
export type ManagementRole = (typeof managementRoleNames)[number];

/** A word in a grant that means nothing on this API, at its field path. */
export interface UnknownGrant {
  field: string;
  /** The word itself. */
  word: string;
  kind: 'clusterRole' | 'verb';
  message: string;
}

/** Edit distance, for "did you mean" (the lists are a handful of short words). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The known word a typo is closest to, if close enough. A word longer than every known word by
 * more than the threshold cannot be close (the distance is at least the difference in length), so
 * it costs nothing; the rest cost a few hundred steps each, once per distinct word (`memo`).
 */
function closest(word: string, known: readonly string[], memo: Map<string, string>): string {
  const cached = memo.get(word);
  if (cached !== undefined) return cached;
  let best = '';
  let bestDistance = Infinity;
  for (const k of known) {
    if (Math.abs(word.length - k.length) > Math.max(2, Math.floor(k.length / 3))) continue;
    const d = distance(word, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  const hint = best && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? `did you mean "${best}"? ` : '';
  memo.set(word, hint);
  return hint;
}

const list = (words: readonly string[]) => words.join(', ');

/**
 * Cluster roles that are not management roles, and access verbs that are not verbs: each grants
 * nothing here, which a typo (`team-viewer`, `updat`) makes look like a grant.
 */
export function unknownGrants(team: KubeObject): UnknownGrant[] {
  const spec = isJsonMap(team.spec) ? team.spec : {};
  const out: UnknownGrant[] = [];
  const roleHints = new Map<string, string>();
  const verbHints = new Map<string, string>();
  const roles = Array.isArray(spec.clusterRoles) ? spec.clusterRoles : [];
  roles.forEach((r, i) => {
    const name = isJsonMap(r) ? r.name : undefined;
    if (typeof name !== 'string' || (managementRoleNames as readonly string[]).includes(name)) return;
    out.push({
      field: `spec.clusterRoles[${i}].name`,
      word: name,
      kind: 'clusterRole',
      message: `spec.clusterRoles[${i}].name: unknown cluster role "${name}": ${closest(name, managementRoleNames, roleHints)}the management roles are ${list(managementRoleNames)}`,
    });
  });
  const rules = Array.isArray(spec.access) ? spec.access : [];
  rules.forEach((rule, i) => {
    const ruleVerbs = isJsonMap(rule) && Array.isArray(rule.verbs) ? rule.verbs : [];
    ruleVerbs.forEach((v, j) => {
      if (typeof v !== 'string' || v === allVerbs || (verbs as readonly string[]).includes(v)) return;
      out.push({
        field: `spec.access[${i}].verbs[${j}]`,
        word: v,
        kind: 'verb',
        message: `spec.access[${i}].verbs[${j}]: unknown verb "${v}": ${closest(v, verbs, verbHints)}the verbs are ${list(verbs)}, or "${allVerbs}" for all`,
      });
    });
  });
  return out;
}
