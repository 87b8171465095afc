/**
 * Issue 24, "nothing reaches further than its key", the rows of the garbage-collection side over
 * HTTP against a started `teamkeys serve`: deletion by proxy through ownerReferences (1), owners
 * checked by uid (2), a terminating team grants nothing, refusals name only what the caller may
 * read (5), and key-value answers counted by the failure limit plus keys per user bounded (10).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from '../server/serve-process.js';
import { eventually } from '../support/eventually.js';

const merge = 'application/merge-patch+json';
const value = (name: string) => `Reach${name.replace(/[^A-Za-z0-9]/g, '')}${'r'.repeat(40)}`;
const zeroUid = '00000000-0000-0000-0000-000000000000';

interface Reply {
  status: number;
  body: { message?: string; reason?: string; metadata?: { uid?: string }; details?: { causes?: { field: string; message: string }[] }; status?: { allowed?: boolean } };
}

describe('issue 24: what a write reaches, what a refusal says, over HTTP', () => {
  let served: Served;
  const call = async (method: string, path: string, token: string, body?: unknown, type = 'application/json', root = false): Promise<Reply> => {
    const res = await fetch(`${served.url}${root ? '' : '/apis/management.service/v1'}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': type } : {}) },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Reply['body'] };
  };
  const admin = (method: string, path: string, body?: unknown, type?: string) => call(method, path, served.adminKey, body, type);
  const uidOf = async (path: string) => (await admin('GET', path)).body.metadata!.uid!;
  const ref = (kind: string, name: string, uid: string, block = false) => ({ apiVersion: 'management.service/v1', kind, name, uid, ...(block ? { blockOwnerDeletion: true } : {}) });
  const gone = (path: string) => eventually(`${path} is gone`, async () => (await admin('GET', path)).status === 404, 10_000);

  beforeAll(async () => {
    // A small failure budget, so row 10 reaches it; the other rows make no failed attempt.
    served = await startServe(['--insecure-http', '--max-keys-per-user', '3', '--auth-failure-limit', '5/0.01']);
    const teams: Record<string, object> = {
      payments: { users: ['pat'], access: [{ name: 'mal-edits', verbs: ['get', 'patch', 'update'], users: ['mal'] }, { name: 'eve-reads', verbs: ['get'], users: ['eve'] }] },
      ops: { users: ['otto'], clusterRoles: [{ name: 'teams-viewer' }] },
      opsowned: { owner: { team: 'ops' } },
      auditors: { users: ['aud'] },
      finance: { access: [{ name: 'auditors-clean-up', verbs: ['get', 'delete'], teams: ['auditors'] }] },
      viewers: { users: ['vic'], clusterRoles: [{ name: 'teams-viewer' }, { name: 'teams-creator' }] },
    };
    for (const [name, spec] of Object.entries(teams)) expect((await admin('POST', '/teams', { metadata: { name }, spec })).status).toBe(201);
    for (const user of ['mal', 'eve', 'otto', 'nobody', 'vic', 'kim', 'pia']) {
      expect((await admin('POST', '/ownedaccesskeys', { metadata: { name: user }, spec: { user, key: value(user) } })).status).toBe(201);
    }
  }, 60_000);
  afterAll(() => served?.stop());

  it.each([
    ['a merge patch', 'PATCH', merge, (refs: object[]) => ({ metadata: { ownerReferences: refs } })],
    ['a JSON patch', 'PATCH', 'application/json-patch+json', (refs: object[]) => [{ op: 'add', path: '/metadata/ownerReferences', value: refs }]],
    ['server-side apply', 'PATCH', 'application/apply-patch+yaml', (refs: object[]) => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'payments', ownerReferences: refs } })],
  ])('1. changing ownerReferences through %s needs delete on the object: 403, and the team stays', async (_how, method, type, body) => {
    const path = `/teams/payments${type.includes('apply') ? '?fieldManager=mal' : ''}`;
    const res = await call(method, path, value('mal'), body([ref('Team', 'gone-for-good', zeroUid)]), type);
    expect(res.status).toBe(403);
    expect(res.body.reason).toBe('Forbidden');
    expect(res.body.message).toContain('changing metadata.ownerReferences requires permission to delete this object');
    // The write she may make still works; the team she may not delete is still there.
    expect((await call('PATCH', '/teams/payments', value('mal'), { spec: { description: 'edited' } }, merge)).status).toBe(200);
    expect((await admin('GET', '/teams/payments')).status).toBe(200);
  });

  it('1. PUT too, and a finalizer is a hold on the delete: both need delete on the object', async () => {
    const current = (await call('GET', '/teams/payments', value('mal'))).body as Record<string, unknown> & { metadata: Record<string, unknown> };
    const put = await call('PUT', '/teams/payments', value('mal'), { ...current, metadata: { ...current.metadata, ownerReferences: [ref('Team', 'ghost', zeroUid)] } });
    expect(put.status).toBe(403);
    const hold = await call('PATCH', '/teams/payments', value('mal'), { metadata: { finalizers: ['example.com/hold'] } }, merge);
    expect(hold.status).toBe(403);
    expect(hold.body.message).toContain('adding a finalizer requires permission to delete this object');
  });

  it('1. removing or changing an existing owner reference needs delete on the object too', async () => {
    const owner = ref('Team', 'auditors', await uidOf('/teams/auditors'));
    const ledger = { metadata: { name: 'ledger', ownerReferences: [owner] }, spec: { access: [{ name: 'mal-edits', verbs: ['get', 'patch'], users: ['mal'] }] } };
    expect((await admin('POST', '/teams', ledger)).status).toBe(201);
    for (const refs of [null, [{ ...owner, controller: true }]]) {
      const res = await call('PATCH', '/teams/ledger', value('mal'), { metadata: { ownerReferences: refs } }, merge);
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('changing metadata.ownerReferences requires permission to delete this object');
    }
    // Edits that leave the references as they are need no more than patch.
    expect((await call('PATCH', '/teams/ledger', value('mal'), { spec: { description: 'kept' } }, merge)).status).toBe(200);
  });

  it('2. an ownerReference must name its owner by uid: another object\'s uid, or none, is 422', async () => {
    const payments = await uidOf('/teams/payments');
    // Eve may only get payments; her own key she may delete. The released code looked the owner up
    // by name (her key) and the collector matched by uid (payments), so this held payments' deletion.
    const foreign = await call('POST', '/ownedaccesskeys', value('eve'), {
      metadata: { name: 'eve-hold', finalizers: ['example.com/hold'], ownerReferences: [ref('OwnedAccessKey', 'eve', payments, true)] },
      spec: { user: 'eve' },
    });
    expect(foreign.status).toBe(422);
    expect(foreign.body.details?.causes).toEqual([{ reason: 'FieldValueInvalid', field: 'metadata.ownerReferences[0].uid', message: expect.stringContaining('must be the uid of the existing OwnedAccessKey "eve"') }]);
    // Even the administrator, who may delete anything, cannot tie an object to an owner that is not there.
    const dangling = await admin('PATCH', '/teams/opsowned', { metadata: { ownerReferences: [ref('Team', 'payments', zeroUid)] } }, merge);
    expect(dangling.status).toBe(422);
    expect(dangling.body.details?.causes?.[0]?.field).toBe('metadata.ownerReferences[0].uid');
    // Blocking the real payments needs delete on it; naming her own key by its uid is hers to do.
    const block = await call('POST', '/ownedaccesskeys', value('eve'), { metadata: { name: 'eve-block', ownerReferences: [ref('Team', 'payments', payments, true)] }, spec: { user: 'eve' } });
    expect(block.status).toBe(422);
    expect(block.body.details?.causes?.[0]?.field).toBe('metadata.ownerReferences[0].blockOwnerDeletion');
    const own = await call('POST', '/ownedaccesskeys', value('eve'), {
      metadata: { name: 'eve-child', ownerReferences: [ref('OwnedAccessKey', 'eve', await uidOf('/ownedaccesskeys/eve'), true)] },
      spec: { user: 'eve' },
    });
    expect(own.status).toBe(201);
    // So a foreground delete of payments is held by nobody: it completes.
    expect((await admin('DELETE', '/teams/payments?propagationPolicy=Foreground')).status).toBe(200);
    await gone('/teams/payments');
  });

  it('a terminating team grants nothing: not its roles, nor ownership through it, in requests and in can-i', async () => {
    const otto = value('otto');
    const review = (name: string) =>
      call('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', otto, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { group: 'management.service', resource: 'teams', verb: 'get', name } } }, 'application/json', true);
    expect((await call('GET', '/teams/auditors', otto)).status).toBe(200); // teams-viewer through ops
    expect((await review('opsowned')).body.status?.allowed).toBe(true);
    // ops held by a finalizer while it is deleted: terminating, for as long as someone likes.
    expect((await admin('PATCH', '/teams/ops', { metadata: { finalizers: ['example.com/hold'] } }, merge)).status).toBe(200);
    expect((await admin('DELETE', '/teams/ops')).status).toBe(200);
    await eventually('otto is refused the team', async () => (await call('GET', '/teams/auditors', otto)).status === 403);
    expect((await call('GET', '/teams/opsowned', otto)).status).toBe(403);
    expect((await call('GET', '/teams/ops', otto)).status).toBe(403);
    expect((await review('opsowned')).body.status?.allowed).toBe(false);
    expect((await review('auditors')).body.status?.allowed).toBe(false);
    // Releasing it completes the deletion.
    expect((await admin('PATCH', '/teams/ops', { metadata: { finalizers: null } }, merge)).status).toBe(200);
    await gone('/teams/ops');
  });

  it('5. a refusal names no team, rule or verb its reader may not read (a dry-run create named like another team)', async () => {
    const probe = (token: string) => call('POST', '/teams?dryRun=All', token, { metadata: { name: 'auditors' }, spec: { users: ['x'] } });
    const blind = await probe(value('nobody'));
    expect(blind.status).toBe(403);
    // A caller who may create no team at all is refused before the body is read (request-gate.ts):
    // the answer is kube's, the same whatever the body names.
    expect(blind.body.message).toBe('teams.management.service is forbidden: User "nobody" cannot create resource "teams" in API group "management.service" at the cluster scope');
    expect(blind.body.message).not.toMatch(/finance|"delete"|auditors-clean-up/);
    // A caller who may read finance is told what is missing there.
    const viewer = await probe(value('vic'));
    expect(viewer.status).toBe(403);
    expect(viewer.body.message).toContain('"delete" on team "finance"');
  });

  it('10. keys per user are bounded (--max-keys-per-user): 403 exceeded quota beyond', async () => {
    const kim = value('kim');
    for (const name of ['kim-2', 'kim-3']) expect((await call('POST', '/ownedaccesskeys', kim, { metadata: { name }, spec: { user: 'kim' } })).status).toBe(201);
    const over = await call('POST', '/ownedaccesskeys', kim, { metadata: { name: 'kim-4' }, spec: { user: 'kim' } });
    expect(over.status).toBe(403);
    expect(over.body.message).toContain('exceeded quota: "kim" already has 3 access keys');
    expect((await call('DELETE', '/ownedaccesskeys/kim-3', kim)).status).toBe(200);
    expect((await call('POST', '/ownedaccesskeys', kim, { metadata: { name: 'kim-4' }, spec: { user: 'kim' } })).status).toBe(201);
  });

  it('10. "this key value is already in use" costs the failure budget: past it, no key value may be set, even with a working key', async () => {
    const pia = value('pia');
    const taken = value('mal');
    // Dry-run creates and rotations of her own key alike tell her a value is someone's key.
    const answers: number[] = [];
    for (let i = 0; i < 3; i++) answers.push((await call('POST', '/ownedaccesskeys?dryRun=All', pia, { metadata: { name: `pia-${i}` }, spec: { user: 'pia', key: taken } })).status);
    for (let i = 0; i < 2; i++) answers.push((await call('PATCH', '/ownedaccesskeys/pia', pia, { spec: { key: taken } }, merge)).status);
    expect(answers).toEqual([422, 422, 422, 422, 422]);
    const refused = await call('POST', '/ownedaccesskeys?dryRun=All', pia, { metadata: { name: 'pia-next' }, spec: { user: 'pia', key: value('somebody') } });
    expect(refused.status).toBe(429);
    expect(refused.body.reason).toBe('TooManyRequests');
    // Her key still works for everything else, and a wrong bearer key from here is refused at once.
    expect((await call('GET', '/ownedaccesskeys/pia', pia)).status).toBe(200);
    expect((await call('GET', '/teams', `Guess${'g'.repeat(40)}`)).status).toBe(429);
  });
});
