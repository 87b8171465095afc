/**
 * What authorization reads of a team (grants.ts, authorize.ts, authenticate.ts, escalation.ts):
 * name, uid, deletionTimestamp and the spec fields that grant. The rest (managedFields, labels,
 * annotations, description) is dropped: 10,000 full teams held tens of MB for nothing.
 *
 * Each field in the shape the schema gives it: a Team stored past the API (a restore, a hand edit)
 * may hold one string where a list of names goes, a number, a null rule. Read as it is, a string
 * matched names by substring (`"alice".includes("ali")` gave user ali the rule's verbs), and a rule
 * that is no object stopped the team index for good (every write then waited for it: 503). Here a
 * field of another shape names nobody: it grants nothing, as the schema would have refused it.
 */
import type { Team } from '../api/types.js';
import { listed } from './grants.js';

/** The strings of a list (as the schema allows them, '' included); none from anything else. */
const names = (v: unknown): string[] => listed(v).filter((x): x is string => typeof x === 'string');
/** A list field as names, left out when absent. */
const namesOrAbsent = (v: unknown): string[] | undefined => (v === undefined ? undefined : names(v));
const name = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function ownerOf(v: unknown): { user?: string; team?: string } | undefined {
  if (!isObject(v)) return undefined;
  const user = name(v.user);
  const team = name(v.team);
  return user === undefined && team === undefined ? undefined : { ...(user !== undefined ? { user } : {}), ...(team !== undefined ? { team } : {}) };
}

function accessOf(v: unknown): Record<string, unknown>[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) return [];
  // A rule that is no object keeps its place (its index names it in a grant's reason) and grants
  // nothing; a rule's other fields (its name, which reasons quote) are kept, a name of another shape not.
  return v.map((rule) => {
    if (!isObject(rule)) return { verbs: [] };
    const out: Record<string, unknown> = { ...rule };
    for (const field of ['users', 'teams', 'verbs', 'subresources']) if (rule[field] !== undefined) out[field] = names(rule[field]);
    if (rule.name !== undefined && typeof rule.name !== 'string') delete out.name;
    return out;
  });
}

function accessRequestsOf(v: unknown): Record<string, unknown> | undefined {
  if (!isObject(v)) return undefined;
  const out: Record<string, unknown> = { ...v };
  if (v.approvers !== undefined) out.approvers = names(v.approvers);
  if (v.breakGlass !== undefined) out.breakGlass = isObject(v.breakGlass) ? { ...v.breakGlass, users: names(v.breakGlass.users) } : {};
  return out;
}

export function authView(team: Team): Team {
  const { name: teamName, uid, creationTimestamp, deletionTimestamp, resourceVersion } = team.metadata;
  const spec = (isObject(team.spec) ? team.spec : {}) as Record<string, unknown>;
  const clusterRoles = spec.clusterRoles === undefined ? undefined : Array.isArray(spec.clusterRoles) ? spec.clusterRoles.filter((r): r is { name: string } => isObject(r) && typeof r.name === 'string').map((r) => ({ ...r })) : [];
  const owner = ownerOf(spec.owner);
  const access = accessOf(spec.access);
  const accessRequests = accessRequestsOf(spec.accessRequests);
  return {
    apiVersion: team.apiVersion,
    kind: team.kind,
    // creationTimestamp: whether an AccessRequest stored before requests were bound came after this team (api/access-request.ts madeOf).
    metadata: { name: teamName, uid, resourceVersion, ...(creationTimestamp ? { creationTimestamp } : {}), ...(deletionTimestamp ? { deletionTimestamp } : {}) },
    spec: {
      users: namesOrAbsent(spec.users),
      groups: namesOrAbsent(spec.groups),
      clusterRoles,
      ...(owner ? { owner } : {}),
      access,
      ...(accessRequests ? { accessRequests } : {}),
    },
  } as Team;
}
