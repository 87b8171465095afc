/** A key's scope in a few words, for the review's key lists (the scope itself decides, in auth/scope.ts). */
import type { OwnedAccessKeySpec } from '../api/types.js';

type Scope = NonNullable<OwnedAccessKeySpec['scope']>;

export function scopeSummary(scope: Scope | undefined): string {
  if (!scope) return 'none';
  const parts: string[] = [];
  if (scope.allowServiceCli === true || (scope.roles ?? []).some((r) => r.role === 'cli')) parts.push('role cli (reads only)');
  for (const r of scope.rules ?? []) {
    const verbs = r.verbs && r.verbs.length > 0 ? r.verbs.join(',') : '*';
    const resources = (r.resources ?? []).flatMap((x) => (x.resources && x.resources.length > 0 ? x.resources : ['*']).map((n) => (x.resourceNames?.length ? `${n}/${x.resourceNames.join('|')}` : n)));
    parts.push(`rule ${verbs} on ${resources.length > 0 ? resources.join(',') : '*'}`);
  }
  const elsewhere = (['projects', 'spaces', 'virtualClusters', 'clusters'] as const).filter((f) => Array.isArray((scope as Record<string, unknown>)[f]) && ((scope as Record<string, unknown[]>)[f]!.length > 0));
  if (elsewhere.length > 0) parts.push(`${elsewhere.join(', ')} only`);
  return parts.length > 0 ? parts.join('; ') : 'other';
}
