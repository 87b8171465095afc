/**
 * The no-escalation rule's refusals that the mutation set's tests did not reach, over HTTP in
 * process: roles that let one act as anyone, a long refusal cut after four items, refusals naming
 * no role of a team the writer may not read, a team created for the writer's own team, an approval
 * granting every verb on a team, and the key writes judged as widening (a Team owner reference
 * added, ttlAfterLastActivity turned on).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create } from './fixture.js';

const keyOf = (who: string) => `${who.replace(/-/g, '').replace(/^./, (c) => c.toUpperCase())}Key${'k'.repeat(40)}`;
const merge = 'application/merge-patch+json';

describe('no escalation: the refusals the mutation set had not reached', () => {
  let server: InProcess;
  const as = async (who: string, method: string, path: string, body: unknown, type = 'application/json', extra: Record<string, string> = {}) => {
    const res = await server.fetch(`${server.api}/${path}`, { method, headers: { 'Content-Type': type, Authorization: `Bearer ${keyOf(who)}`, ...extra }, body: JSON.stringify(body) });
    return { status: res.status, message: ((await res.json()) as { message?: string }).message };
  };

  beforeAll(async () => {
    server = await startInProcess();
    const teams: Record<string, Record<string, unknown>> = {
      platform: { users: ['ana'], clusterRoles: [{ name: 'teams-admin' }] },
      support: { users: ['sam'], clusterRoles: [{ name: 'impersonator' }, { name: 'accesskeys-admin' }, { name: 'teams-viewer' }] },
      many: { users: ['mo'], clusterRoles: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((name) => ({ name })) },
      devs: { users: ['cleo'], clusterRoles: [{ name: 'teams-creator' }] },
      ops: { accessRequests: { approvers: ['apo'] } },
      vault: { owner: { team: 'ops' } },
      guarded: { clusterRoles: [{ name: 'teams-viewer' }], access: [{ verbs: ['patch', 'update'], users: ['pia'] }] },
    };
    for (const [name, spec] of Object.entries(teams)) {
      const res = await create(server, 'teams', { metadata: { name }, spec });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const keys: Record<string, Record<string, unknown>> = {
      'ana-key': { user: 'ana' },
      'ana-ttl': { user: 'ana', ttl: 3600 },
      'ana-plain': { user: 'ana' },
      'ana-short': { user: 'ana', ttl: 600 },
      'sam-key': { user: 'sam' },
      'cleo-key': { user: 'cleo' },
      'pia-key': { user: 'pia' },
      'apo-key': { user: 'apo' },
      'rey-key': { user: 'rey' },
    };
    for (const [name, spec] of Object.entries(keys)) {
      const res = await create(server, 'ownedaccesskeys', { metadata: { name }, spec: { ...spec, key: keyOf(name) } });
      expect(res.status, await res.clone().text()).toBe(201);
    }
  });
  afterAll(() => server.close());

  it('a role that lets one act as anyone is granted only by whoever may impersonate', async () => {
    const res = await as('ana-key', 'POST', 'teams', { metadata: { name: 'actors' }, spec: { clusterRoles: [{ name: 'impersonator' }] } });
    expect(res).toEqual({ status: 403, message: expect.stringContaining('granting cluster role(s) "impersonator" requires holding them') });
  });

  it('a refusal listing more than four things names four and counts the rest', async () => {
    const res = await as('sam-key', 'GET', 'teams', undefined, 'application/json', { 'Impersonate-User': 'mo' });
    expect(res.status).toBe(403);
    expect(res.message).toContain(': impersonating "mo" would give you cluster role "r1"; cluster role "r2"; cluster role "r3"; cluster role "r4" and 2 more, which you do not hold');
  });

  it('adding members to a team the writer may patch but not read names no role of it', async () => {
    const res = await as('pia-key', 'PATCH', 'teams/guarded', { spec: { users: ['pia'] } }, merge);
    expect(res).toEqual({ status: 403, message: expect.stringContaining(': adding members to a team that grants cluster roles requires holding those roles') });
  });

  it('a key of a team the writer may update but not read names no role of it', async () => {
    const res = await as('pia-key', 'POST', 'ownedaccesskeys', { metadata: { name: 'guarded-ci' }, spec: { team: 'guarded' } });
    expect(res).toEqual({ status: 403, message: expect.stringContaining(': a key of team "guarded" would grant cluster roles, which you do not hold') });
  });

  it('a team created for the writer’s own team may carry access rules: the writer owns it through that team', async () => {
    const res = await as('cleo-key', 'POST', 'teams', { metadata: { name: 'newt' }, spec: { owner: { team: 'devs' }, access: [{ verbs: ['get'], users: ['zed'] }] } });
    expect(res.status).toBe(201);
  });

  it('a key write adding a Team owner reference is a widening: a writer that expires may not make it', async () => {
    const platform = (await (await server.fetch(`${server.api}/teams/platform`)).json()) as { metadata: { uid: string } };
    const ref = { apiVersion: 'management.service/v1', kind: 'Team', name: 'platform', uid: platform.metadata.uid };
    const res = await as('ana-ttl', 'PATCH', 'ownedaccesskeys/ana-plain', { metadata: { ownerReferences: [ref] } }, merge);
    expect(res).toEqual({ status: 403, message: expect.stringContaining('a key made or widened by a key that expires must expire no later') });
  });

  it('turning on ttlAfterLastActivity is a widening: a writer that expires may not do it', async () => {
    const res = await as('ana-ttl', 'PATCH', 'ownedaccesskeys/ana-short', { spec: { ttlAfterLastActivity: true } }, merge);
    expect(res).toEqual({ status: 403, message: expect.stringContaining('a key made or widened by a key that expires must expire no later') });
    // The same write by a key that does not expire is allowed.
    expect((await as('ana-key', 'PATCH', 'ownedaccesskeys/ana-short', { spec: { ttlAfterLastActivity: true } }, merge)).status).toBe(200);
  });

  it('approving a membership that owns another team the approver may not read names no team', async () => {
    const asked = await as('rey-key', 'POST', 'accessrequests', { apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { name: 'rey-ops' }, spec: { team: 'ops', reason: 'on call' } });
    expect(asked.status).toBe(201);
    const current = (await (await server.fetch(`${server.api}/accessrequests/rey-ops`)).json()) as { status?: { conditions?: unknown[] } };
    const approved = { ...current, status: { ...current.status, conditions: [...(current.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'ByHand', message: 'looked at it' }] } };
    const res = await as('apo-key', 'PUT', 'accessrequests/rey-ops/approval', approved);
    // apo may not get team vault (which ops owns): the refusal says what, not where, as every escalation refusal does.
    expect(res).toEqual({ status: 403, message: expect.stringContaining(': approving this request would grant rights on teams you may not read, which you do not hold') });
  });
});
