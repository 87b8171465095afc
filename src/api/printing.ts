/**
 * The printer columns of each kind: what `kubectl get` (through the server's Table responses)
 * and `teamkeys get` show. Priority 1 columns appear only with `-o wide`.
 */
import type { ApiKind } from './resources.js';
import type { AccessRequest, KubeObject } from './types.js';
import { owesReview } from './access-request.js';

export interface Column {
  name: string;
  type: 'string' | 'integer' | 'boolean' | 'date';
  format?: 'name';
  description: string;
  priority: 0 | 1;
  /** null when the object has no value there; kubectl prints it blank. */
  cell(obj: KubeObject, now: Date): string | number | boolean | null;
}

const spec = (o: KubeObject) => (o.spec ?? {}) as Record<string, unknown>;
const joined = (v: unknown) => (Array.isArray(v) && v.length > 0 ? v.join(',') : null);
const text = (v: unknown) => (v === undefined || v === null || v === '' ? null : String(v));

const name: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within the kind.',
  priority: 0,
  cell: (o) => o.metadata.name ?? '',
};

const age: Column = {
  name: 'Age',
  type: 'date',
  description: 'Time since the object was created.',
  priority: 0,
  cell: (o, now) => (o.metadata.creationTimestamp ? humanDuration(now.getTime() - Date.parse(o.metadata.creationTimestamp)) : '<unknown>'),
};

const displayName: Column = {
  name: 'Display Name',
  type: 'string',
  description: 'Name shown in the UI.',
  priority: 0,
  cell: (o) => text(spec(o).displayName),
};

export const teamColumns: Column[] = [
  name,
  displayName,
  { name: 'Users', type: 'string', description: 'Users that belong to the team.', priority: 0, cell: (o) => joined(spec(o).users) },
  { name: 'Groups', type: 'string', description: 'Groups whose members belong to the team.', priority: 0, cell: (o) => joined(spec(o).groups) },
  age,
  {
    name: 'Cluster Roles',
    type: 'string',
    description: "Cluster roles assigned to the team's users.",
    priority: 1,
    cell: (o) => joined((spec(o).clusterRoles as { name?: string }[] | undefined)?.map((r) => r.name)),
  },
];

export const ownedAccessKeyColumns: Column[] = [
  name,
  displayName,
  { name: 'User', type: 'string', description: 'User the key refers to.', priority: 0, cell: (o) => text(spec(o).user) },
  { name: 'Team', type: 'string', description: 'Team the key refers to.', priority: 0, cell: (o) => text(spec(o).team) },
  { name: 'Disabled', type: 'boolean', description: 'Whether the key is disabled.', priority: 0, cell: (o) => spec(o).disabled === true },
  // Shown by default: a person listing their keys tells sign-ins (Login) from keys made for pipelines, and sees which are in use.
  { name: 'Type', type: 'string', description: 'Kind of key: Login (made by signing in), User, ...', priority: 0, cell: (o) => text(spec(o).type) },
  {
    name: 'Last Activity',
    type: 'string',
    description: 'Time since the key was last used (recorded at most once a minute).',
    priority: 0,
    cell: (o, now) => {
      const at = (o.status as { lastActivity?: string } | undefined)?.lastActivity;
      return at ? humanDuration(now.getTime() - Date.parse(at)) : null;
    },
  },
  age,
  { name: 'TTL', type: 'integer', description: 'Time to live in seconds; 0 means never expires.', priority: 1, cell: (o) => Number(spec(o).ttl ?? 0) },
];

export const federatedCredentialColumns: Column[] = [
  name,
  displayName,
  { name: 'Issuer', type: 'string', description: 'The issuer whose job tokens the rule trusts.', priority: 0, cell: (o) => text(spec(o).issuer) },
  { name: 'User', type: 'string', description: 'User the minted keys act for.', priority: 0, cell: (o) => text(spec(o).user) },
  { name: 'Team', type: 'string', description: 'Team the minted keys act for.', priority: 0, cell: (o) => text(spec(o).team) },
  { name: 'TTL', type: 'integer', description: 'Longest life of a minted key, in seconds.', priority: 0, cell: (o) => Number(spec(o).ttl ?? 3600) },
  age,
  { name: 'Audiences', type: 'string', description: 'Audiences a job token may be issued for.', priority: 1, cell: (o) => joined(spec(o).audiences) },
];


const status = (o: KubeObject) => (o.status ?? {}) as Record<string, unknown>;

/** kubectl get accessrequests: requester, team, phase, expires. */
export const accessRequestColumns: Column[] = [
  name,
  { name: 'User', type: 'string', description: 'The user who gains the membership.', priority: 0, cell: (o) => text(spec(o).user) },
  { name: 'Team', type: 'string', description: 'The team asked for.', priority: 0, cell: (o) => text(spec(o).team) },
  { name: 'Phase', type: 'string', description: 'Pending, Active, Denied, Expired or Revoked.', priority: 0, cell: (o) => text(status(o).phase) },
  { name: 'Expires', type: 'string', description: 'When an active request ends.', priority: 0, cell: (o) => text(status(o).expiresAt) },
  { name: 'Review', type: 'string', description: 'A break-glass request: Owed until an approver reviews it, then Done.', priority: 0, cell: (o) => (spec(o).breakGlass === true ? (owesReview(o as AccessRequest) ? 'Owed' : 'Done') : '') },
  age,
  { name: 'Reason', type: 'string', description: 'Why the access is needed.', priority: 1, cell: (o) => text(spec(o).reason) },
];

const columnsByKind: Record<ApiKind, Column[]> = { Team: teamColumns, OwnedAccessKey: ownedAccessKeyColumns, FederatedCredential: federatedCredentialColumns, AccessRequest: accessRequestColumns };

/** The printer columns of a served kind (kubectl get's table); name and age for any other, as kubectl prints. */
export function columnsFor(kind: string): Column[] {
  return Object.hasOwn(columnsByKind, kind) ? columnsByKind[kind as ApiKind] : [name, age];
}

/** kube's HumanDuration: 45s, 5m30s, 12m, 3h20m, 20h, 2d5h, 40d, 1y30d. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}
