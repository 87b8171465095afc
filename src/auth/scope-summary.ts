/**
 * A key's scope in a few words, for listings (`teamkeys keys`) and reviews: what it leaves of the
 * management API, read with the authorizer's own rules (scope.ts), so the summary cannot say
 * "full" of a key the authorizer narrows, or "rules" of rules it never matches to this API.
 */
import { nonEmpty, ruleReachesManagement, scopeAllowsCliReads, scopeNarrows, type Scope } from './scope.js';

/** The scope fields a summary names when none of them reaches the management API. */
const fieldNames: (keyof Scope)[] = ['roles', 'projects', 'spaces', 'virtualClusters', 'clusters', 'rules'];

/**
 * `full` (no narrowing), `cli (read-only)`, `rules: 2`, `cli (read-only), rules: 1`, or
 * `projects only: no management access` (`projects, spaces only: ...`) when the scope names only
 * what this API never serves.
 */
export function scopeSummary(scope: Scope | undefined): string {
  if (!scopeNarrows(scope)) return 'full';
  const parts: string[] = [];
  if (scopeAllowsCliReads(scope)) parts.push('cli (read-only)');
  const rules = (scope.rules ?? []).filter(ruleReachesManagement).length;
  if (rules > 0) parts.push(`rules: ${rules}`);
  if (parts.length > 0) return parts.join(', ');
  const named = fieldNames.filter((f) => nonEmpty(scope[f]));
  return `${named.join(', ')} only: no management access`;
}
