import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create, seed, type Tokens } from './fixture.js';

interface Row {
  who: string;
  method: string;
  path: string;
  body?: unknown;
  type?: string;
  code: number;
  message?: string;
}

const merge = 'application/merge-patch+json';
const forbidden = (who: string, verb: string, resource: string, name?: string) =>
  `${resource}.management.service${name ? ` "${name}"` : ''} is forbidden: User "${who}" cannot ${verb} resource "${resource}" in API group "management.service" at the cluster scope`;

const rows: Row[] = [
  // Authentication
  { who: '(none)', method: 'GET', path: '/teams', code: 401, message: 'Unauthorized' },
  { who: '(garbage)', method: 'GET', path: '/teams', code: 401, message: 'Unauthorized' },
  { who: '(unknown)', method: 'GET', path: '/teams', code: 401, message: 'Unauthorized' },
  // Roles
  { who: 'ana', method: 'GET', path: '/teams/payments', code: 200 },
  { who: 'ana', method: 'PATCH', path: '/teams/payments', type: merge, body: { spec: { description: 'by ana' } }, code: 200 },
  { who: 'ana', method: 'GET', path: '/ownedaccesskeys/pat', code: 403, message: forbidden('ana', 'get', 'ownedaccesskeys', 'pat') },
  { who: 'gina', method: 'GET', path: '/teams/payments', code: 200 }, // member of platform through group platform-devs
  { who: 'vic', method: 'GET', path: '/teams/payments', code: 200 },
  { who: 'vic', method: 'PATCH', path: '/teams/payments', type: merge, body: { spec: { description: 'x' } }, code: 403, message: forbidden('vic', 'patch', 'teams', 'payments') },
  // Refused before the body is read (request-gate.ts): as kube's, a create's refusal names no object.
  { who: 'vic', method: 'POST', path: '/teams', body: { metadata: { name: 'vics' } }, code: 403, message: forbidden('vic', 'create', 'teams') },
  { who: 'cleo', method: 'POST', path: '/teams', body: { metadata: { name: 'cleos' } }, code: 201 },
  { who: 'cleo', method: 'GET', path: '/teams/payments', code: 403 },
  { who: 'kai', method: 'GET', path: '/ownedaccesskeys/pat', code: 200 },
  { who: 'kai', method: 'GET', path: '/teams/payments', code: 403 },
  { who: 'oncall', method: 'GET', path: '/teams/ops', code: 403 }, // cluster-admin is not a management role
  // Owner and access rules
  { who: 'olga', method: 'PATCH', path: '/teams/payments', type: merge, body: { spec: { displayName: 'Payments' } }, code: 200 },
  { who: 'ulrich', method: 'GET', path: '/teams/payments', code: 200 },
  { who: 'ulrich', method: 'PATCH', path: '/teams/payments', type: merge, body: { spec: { displayName: 'P' } }, code: 200 },
  { who: 'ulrich', method: 'DELETE', path: '/teams/payments', code: 403, message: forbidden('ulrich', 'delete', 'teams', 'payments') },
  { who: 'aud', method: 'DELETE', path: '/teams/payments?dryRun=All', code: 200 }, // '*' through team auditors
  { who: 'pat', method: 'GET', path: '/teams/payments', code: 403 }, // membership grants only what names the team: nothing on payments here
  { who: 'nobody', method: 'GET', path: '/teams/payments', code: 403 },
  { who: 'nobody', method: 'GET', path: '/teams/no-such-team', code: 403 }, // no existence leak
  { who: 'admin', method: 'GET', path: '/teams/no-such-team', code: 404 },
  { who: 'payments-team', method: 'GET', path: '/teams/payments', code: 403 },
  // Own keys
  { who: 'nobody', method: 'GET', path: '/ownedaccesskeys/nobody', code: 200 },
  { who: 'nobody', method: 'GET', path: '/ownedaccesskeys/ana', code: 403 },
  { who: 'olga', method: 'GET', path: '/ownedaccesskeys/payments-team', code: 200 }, // team key, olga may update payments
  { who: 'pat', method: 'GET', path: '/ownedaccesskeys/payments-team', code: 403 },
  // Scopes only narrow
  { who: 'ana-cli', method: 'GET', path: '/teams/payments', code: 200 },
  { who: 'ana-cli', method: 'GET', path: '/teams', code: 200 },
  {
    who: 'ana-cli',
    method: 'PATCH',
    path: '/teams/payments',
    type: merge,
    body: { spec: { description: 'cli' } },
    code: 403,
    message: `${forbidden('ana', 'patch', 'teams', 'payments')}: the access key's scope (role cli) allows only read requests`,
  },
  { who: 'ana-projects', method: 'GET', path: '/teams/payments', code: 403, message: "the access key's scope does not allow this management request" },
  { who: 'ana-rules', method: 'GET', path: '/teams/payments', code: 200 },
  { who: 'ana-rules', method: 'GET', path: '/teams/platform', code: 403 },
  { who: 'ana-rules', method: 'PATCH', path: '/teams/payments', type: merge, body: { spec: { description: 'r' } }, code: 403 },
  { who: 'ana-rules', method: 'DELETE', path: '/teams/payments?dryRun=All', code: 403 },
  { who: 'ana', method: 'DELETE', path: '/teams?labelSelector=none%3Dmatch', code: 200 }, // teams-admin
  { who: 'vic', method: 'DELETE', path: '/teams?labelSelector=none%3Dmatch', code: 403, message: forbidden('vic', 'deletecollection', 'teams') },
];

describe('authorization over HTTP: (identity, scope, verb, object) -> allowed / 401 / 403', () => {
  let server: InProcess;
  let tokens: Tokens;
  const tokenOf = (who: string) =>
    who === '(none)' ? undefined : who === '(garbage)' ? 'not a key' : who === '(unknown)' ? 'X'.repeat(64) : tokens[who];

  beforeAll(async () => {
    server = await startInProcess();
    tokens = await seed(server);
  });
  afterAll(() => server.close());

  it.each(rows)('$who $method $path -> $code', async (row) => {
    const token = row.who === 'admin' ? undefined : tokenOf(row.who);
    const headers: Record<string, string> = { ...(row.body ? { 'Content-Type': row.type ?? 'application/json' } : {}) };
    if (row.who !== 'admin') headers.Authorization = token === undefined ? '' : `Bearer ${token}`;
    const res = await server.fetch(`${server.api}${row.path}`, {
      method: row.method,
      headers,
      ...(row.body ? { body: JSON.stringify(row.body) } : {}),
    });
    const body = (await res.json()) as { message?: string; reason?: string; kind?: string };
    expect(res.status, JSON.stringify(body)).toBe(row.code);
    if (row.code === 401) {
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="teamkeys"');
      expect(body).toMatchObject({ kind: 'Status', reason: 'Unauthorized' });
    }
    if (row.code === 403) expect(body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    if (row.message) expect(body.message).toContain(row.message);
  });

  const names = async (token: string, plural: string) => {
    const res = await server.fetch(`${server.api}/${plural}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name);
  };

  it('lists show only what the caller may see', async () => {
    expect(await names(tokens.nobody!, 'ownedaccesskeys')).toEqual(['nobody']);
    // ana may update team payments (teams-admin), so she sees its team key too.
    expect(await names(tokens.ana!, 'ownedaccesskeys')).toEqual(['ana', 'ana-cli', 'ana-projects', 'ana-rules', 'payments-team']);
    expect(await names(tokens.olga!, 'ownedaccesskeys')).toEqual(['olga', 'payments-team']);
    expect(await names(tokens.kai!, 'ownedaccesskeys')).toContain('zed-key');
    expect(await names(tokens.nobody!, 'teams')).toEqual([]);
    expect(await names(tokens.ulrich!, 'teams')).toEqual(['payments']);
    expect(await names(tokens.vic!, 'teams')).toContain('platform');
  });

  it('a watch shows only what the caller may see', async () => {
    const res = await server.fetch(`${server.api}/ownedaccesskeys?watch=true`, { headers: { Authorization: `Bearer ${tokens.nobody!}` } });
    const { readEvents } = await import('../server/in-process.js');
    const events = await readEvents(res, 5, 1000);
    expect(events.map((e) => (e.object.metadata as { name: string }).name)).toEqual(['nobody']);
  });
});

describe('no escalation: a caller grants only what it holds', () => {
  let server: InProcess;
  let tokens: Tokens;
  beforeAll(async () => {
    server = await startInProcess();
    tokens = await seed(server);
  });
  afterAll(() => server.close());

  const patch = (who: string, path: string, body: unknown) =>
    server.fetch(`${server.api}${path}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/merge-patch+json', Authorization: `Bearer ${tokens[who]!}` },
      body: JSON.stringify(body),
    });
  const expect403 = async (res: Response, why: string) => {
    const body = (await res.json()) as { message: string; reason: string };
    expect(res.status, body.message).toBe(403);
    expect(body.reason).toBe('Forbidden');
    expect(body.message).toContain(why);
  };

  it.each([
    ['a role the caller lacks, given to a team', 'ana', '/teams/payments', { spec: { clusterRoles: [{ name: 'management-admin' }] } }, 'granting cluster role(s) "management-admin" requires holding them'],
    ['members added to a team whose role the caller lacks', 'ana', '/teams/ops', { spec: { users: ['ana'] } }, 'adding members to a team that grants "cluster-admin" requires holding those roles'],
    ['an access rule with a verb the caller lacks', 'ulrich', '/teams/payments', { spec: { access: [{ verbs: ['delete'], users: ['ulrich'] }] } }, 'missing "delete"'],
    ['an access rule with *', 'ulrich', '/teams/payments', { spec: { access: [{ verbs: ['*'], users: ['mallory'] }] } }, 'an access rule may grant only what you hold'],
    ['a new owner by someone without every verb', 'ulrich', '/teams/payments', { spec: { owner: { user: 'ulrich' } } }, 'changing spec.owner requires every verb on the team'],
    ['a key moved to another user', 'nobody', '/ownedaccesskeys/nobody', { spec: { user: 'ana' } }, 'keys for another user ("ana") require the accesskeys-admin role'],
    ['extra groups on ones own key', 'nobody', '/ownedaccesskeys/nobody', { spec: { groups: ['platform-devs'] } }, 'setting spec.groups requires the accesskeys-admin role'],
  ])('refuses %s', async (_label, who, path, body, why) => {
    await expect403(await patch(who, path, body), why);
  });

  it.each([
    ['a key for another user', 'nobody', { user: 'ana' }, 'keys for another user ("ana") require the accesskeys-admin role'],
    ['a subject key', 'nobody', { subject: 'ci-bot' }, 'keys for a generic subject require the accesskeys-admin role'],
    ['a key with extra groups', 'nobody', { user: 'nobody', groups: ['platform-devs'] }, 'setting spec.groups requires the accesskeys-admin role'],
    ['a key with an identity', 'nobody', { user: 'nobody', identity: { username: 'root' } }, 'setting spec.identity requires the accesskeys-admin role'],
    ['a key of a team the caller may not update', 'pat', { team: 'payments' }, 'keys of team "payments" are managed by those who may update the team'],
    ['a key of a team whose roles the caller lacks', 'ana', { team: 'ops' }, 'a key of team "ops" would grant "cluster-admin", which you do not hold'],
  ])('refuses creating %s', async (_label, who, spec, why) => {
    await expect403(await create(server, 'ownedaccesskeys', { metadata: { name: `k-${who}-${Object.keys(spec).join('-')}` }, spec }, tokens[who]), why);
  });

  it('refuses a teams-creator a team with roles it does not hold, and allows one it owns', async () => {
    await expect403(
      await create(server, 'teams', { metadata: { name: 'mine' }, spec: { clusterRoles: [{ name: 'management-admin' }] } }, tokens.cleo),
      'granting cluster role(s) "management-admin"',
    );
    const owned = await create(server, 'teams', { metadata: { name: 'cleo-team' }, spec: { owner: { user: 'cleo' }, access: [{ verbs: ['get'], users: ['vic'] }] } }, tokens.cleo);
    expect(owned.status).toBe(201);
    expect((await server.fetch(`${server.api}/teams/cleo-team`, { headers: { Authorization: `Bearer ${tokens.cleo!}` } })).status).toBe(200);
  });

  it('allows what the caller does hold', async () => {
    expect((await patch('ana', '/teams/platform', { spec: { users: ['ana', 'newbie'] } })).status).toBe(200);
    expect((await patch('ulrich', '/teams/payments', { spec: { access: [{ verbs: ['get'], users: ['ulrich'] }] } })).status).toBe(200);
    expect((await create(server, 'ownedaccesskeys', { metadata: { name: 'nobody-2' }, spec: { user: 'nobody' } }, tokens.nobody)).status).toBe(201);
    expect((await create(server, 'ownedaccesskeys', { metadata: { name: 'olga-team-key' }, spec: { team: 'payments' } }, tokens.olga)).status).toBe(201);
    expect((await create(server, 'ownedaccesskeys', { metadata: { name: 'kai-for-zed' }, spec: { user: 'zed', groups: ['x'] } }, tokens.kai)).status).toBe(201);
  });

  it('setting blockOwnerDeletion needs delete permission on the owner: 422 otherwise', async () => {
    const payments = (await (await server.fetch(`${server.api}/teams/payments`)).json()) as { metadata: { uid: string } };
    const ref = (block: boolean) => ({ apiVersion: 'management.service/v1', kind: 'Team', name: 'payments', uid: payments.metadata.uid, blockOwnerDeletion: block });
    const key = (name: string, who: string, block: boolean) =>
      create(server, 'ownedaccesskeys', { metadata: { name, ownerReferences: [ref(block)] }, spec: { user: who } }, tokens[who]);
    const refused = await key('ulrich-owned', 'ulrich', true);
    const body = (await refused.json()) as { reason: string; details: { causes: { field: string; reason: string; message: string }[] } };
    expect(refused.status).toBe(422);
    expect(body.reason).toBe('Invalid');
    expect(body.details.causes[0]).toEqual({
      field: 'metadata.ownerReferences[0].blockOwnerDeletion',
      reason: 'FieldValueForbidden',
      message: 'Forbidden: setting blockOwnerDeletion requires permission to delete the owner Team "payments"',
    });
    expect((await key('ulrich-owned', 'ulrich', false)).status).toBe(201);
    expect((await key('olga-owned', 'olga', true)).status).toBe(201); // olga owns payments: every verb
  });

  it('status is written only by admins through the API', async () => {
    const res = await server.fetch(`${server.api}/ownedaccesskeys/nobody/status`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/merge-patch+json', Authorization: `Bearer ${tokens.nobody!}` },
      body: JSON.stringify({ status: { lastActivity: '2000-01-01T00:00:00Z' } }),
    });
    expect(res.status).toBe(403);
  });
});
