/**
 * A key's scope only narrows: it can take away, never add. No scope (or an empty one) leaves the
 * identity's permissions as they are.
 */
import type { OwnedAccessKeySpec } from '../api/types.js';
import { readVerbs, type ImpersonationResource, type Resource, type Verb } from './roles.js';

export type Scope = NonNullable<OwnedAccessKeySpec['scope']>;
type Rule = NonNullable<Scope['rules']>[number];

export interface ScopedRequest {
  /** A verb of this API, or `impersonate` on a kind of kube's user info (auth/impersonation.ts). */
  verb: Verb | 'impersonate';
  group: string;
  resource: Resource | ImpersonationResource;
  subresource?: string;
  name?: string;
}

export const nonEmpty = (v: unknown) => (Array.isArray(v) ? v.length > 0 : v !== undefined && v !== false && v !== '');

/** Whether a scope narrows at all: no scope, or one with every field empty, leaves the identity as it is. */
export const scopeNarrows = (scope: Scope | undefined): scope is Scope => scope !== undefined && Object.values(scope).some(nonEmpty);

/** Role cli (or the deprecated allowServiceCli): read-only management requests. */
export const scopeAllowsCliReads = (scope: Scope): boolean => scope.allowServiceCli === true || (scope.roles ?? []).some((r) => r.role === 'cli');

/** Whether a rule can match any request to this API at all (before its verbs and resources are read). */
export function ruleReachesManagement(rule: Rule): boolean {
  if (nonEmpty(rule.requestTargets) && !rule.requestTargets!.includes('Management')) return false;
  // A rule bound to a cluster or virtual clusters speaks of requests to those, not to this API.
  if (rule.cluster || nonEmpty(rule.virtualClusters)) return false;
  // Both kinds are cluster-scoped: the empty string stands for "not namespaced".
  return !(nonEmpty(rule.namespaces) && !rule.namespaces!.includes(''));
}

function ruleMatches(rule: Rule, req: ScopedRequest): boolean {
  if (!ruleReachesManagement(rule)) return false;
  if (nonEmpty(rule.verbs) && !rule.verbs!.includes(req.verb) && !rule.verbs!.includes('*')) return false;
  if (!nonEmpty(rule.resources)) return true;
  const full = req.subresource ? `${req.resource}/${req.subresource}` : req.resource;
  return rule.resources!.some((r) => {
    if (r.group !== undefined && r.group !== req.group && r.group !== '*') return false;
    const names = r.resources ?? [];
    const resourceOk =
      names.length === 0 ||
      names.some((n) => n === '*' || n === full || (req.subresource ? n === `${req.resource}/*` || n === `*/${req.subresource}` : false));
    if (!resourceOk) return false;
    return !nonEmpty(r.resourceNames) || (req.name !== undefined && r.resourceNames!.includes(req.name));
  });
}

/** undefined when the scope allows the request; otherwise why not, for the 403 message. */
export function scopeDenial(scope: Scope | undefined, req: ScopedRequest): string | undefined {
  if (!scopeNarrows(scope)) return undefined;
  const cli = scopeAllowsCliReads(scope);
  if (cli && (readVerbs as readonly string[]).includes(req.verb)) return undefined;
  if ((scope.rules ?? []).some((rule) => ruleMatches(rule, req))) return undefined;
  if (cli) return "the access key's scope (role cli) allows only read requests";
  return "the access key's scope does not allow this management request";
}
