/** Teams and keys for the authorization tests, created by the administrator over HTTP. */
import { expect } from 'vitest';
import type { InProcess } from '../server/in-process.js';

export const json = { 'Content-Type': 'application/json' };

export async function create(server: InProcess, plural: string, body: unknown, token?: string): Promise<Response> {
  return server.fetch(`${server.api}/${plural}`, {
    method: 'POST',
    headers: { ...json, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
}

const teams = [
  { name: 'platform', spec: { users: ['ana'], groups: ['platform-devs'], clusterRoles: [{ name: 'teams-admin' }] } },
  { name: 'viewers', spec: { users: ['vic'], clusterRoles: [{ name: 'teams-viewer' }] } },
  { name: 'creators', spec: { users: ['cleo'], clusterRoles: [{ name: 'teams-creator' }] } },
  { name: 'keyadmins', spec: { users: ['kai'], clusterRoles: [{ name: 'accesskeys-admin' }] } },
  { name: 'auditors', spec: { users: ['aud'] } },
  { name: 'ops', spec: { groups: ['oncall'], clusterRoles: [{ name: 'cluster-admin' }] } },
  {
    name: 'payments',
    spec: {
      users: ['pat'],
      owner: { user: 'olga' },
      access: [
        { name: 'ulrich-edits', verbs: ['get', 'update', 'patch'], users: ['ulrich'] },
        { name: 'auditors-all', verbs: ['*'], teams: ['auditors'] },
      ],
    },
  },
];

const keys: Record<string, Record<string, unknown>> = {
  ana: { user: 'ana' },
  gina: { user: 'gina', groups: ['platform-devs'] },
  vic: { user: 'vic' },
  cleo: { user: 'cleo' },
  kai: { user: 'kai' },
  olga: { user: 'olga' },
  ulrich: { user: 'ulrich' },
  aud: { user: 'aud' },
  pat: { user: 'pat' },
  nobody: { user: 'nobody' },
  oncall: { user: 'otto', groups: ['oncall'] },
  'ana-cli': { user: 'ana', scope: { roles: [{ role: 'cli' }] } },
  'ana-projects': { user: 'ana', scope: { projects: [{ project: 'p1' }] } },
  'ana-rules': {
    user: 'ana',
    scope: {
      rules: [{ verbs: ['get', 'list'], resources: [{ group: 'management.service', resources: ['teams'], resourceNames: ['payments'] }], requestTargets: ['Management'] }],
    },
  },
  'payments-team': { team: 'payments' },
};

/** Key name -> key value. */
export type Tokens = Record<string, string>;

export async function seed(server: InProcess): Promise<Tokens> {
  for (const t of teams) {
    const res = await create(server, 'teams', { metadata: { name: t.name }, spec: t.spec });
    expect(res.status, await res.clone().text()).toBe(201);
  }
  const tokens: Tokens = {};
  for (const [name, spec] of Object.entries(keys)) {
    const res = await create(server, 'ownedaccesskeys', { metadata: { name }, spec });
    const body = (await res.json()) as { spec: { key: string } };
    expect(res.status).toBe(201);
    tokens[name] = body.spec.key;
  }
  // Another user's key, to prove it stays invisible.
  await create(server, 'ownedaccesskeys', { metadata: { name: 'zed-key' }, spec: { user: 'zed' } });
  return tokens;
}

