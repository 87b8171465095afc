/**
 * An approval counts towards requiredApprovals while its approver may still approve: one taken out
 * of the approvers since (or out of the owner team) no longer makes up the team's two-person rule
 * (found by a review), while approvers through a group, and administrators, still count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { ManualClock, hour } from '../support/clock.js';

const json = { 'Content-Type': 'application/json' };
const merge = { 'Content-Type': 'application/merge-patch+json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;
const as = (who: string) => ({ ...json, Authorization: `Bearer ${keyOf(who)}` });

describe('approvals that still count', () => {
  let server: InProcess;
  const clock = new ManualClock('2026-11-27T10:00:00Z');
  const url = (path: string) => `${server.api}/${path}`;
  const get = (who: string, path: string) => server.fetch(url(path), { headers: as(who) });
  const ask = async (who: string, spec: Record<string, unknown>) => {
    const res = await server.fetch(url('accessrequests'), { method: 'POST', headers: as(who), body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { generateName: 'req-' }, spec }) });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { metadata: { name: string } }).metadata.name;
  };
  const decide = async (who: string | undefined, name: string) => {
    const current = (await (await server.fetch(url(`accessrequests/${name}`))).json()) as { status?: { conditions?: unknown[] } };
    const body = { ...current, status: { ...current.status, conditions: [...(current.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'ByHand', message: 'ok' }] } };
    return server.fetch(url(`accessrequests/${name}/approval`), { method: 'PUT', headers: who ? as(who) : json, body: JSON.stringify(body) });
  };
  const make = async (path: string, body: unknown) => {
    const res = await server.fetch(url(path), { method: 'POST', headers: json, body: JSON.stringify(body) });
    expect(res.status, await res.clone().text()).toBe(201);
  };
  const patchTeam = async (name: string, spec: unknown, who?: string) =>
    server.fetch(url(`teams/${name}`), { method: 'PATCH', headers: { ...merge, ...(who ? { Authorization: `Bearer ${keyOf(who)}` } : {}) }, body: JSON.stringify({ spec }) });
  const phaseOf = async (name: string) => ((await (await server.fetch(url(`accessrequests/${name}`))).json()) as { status: { phase: string; expiresAt?: string } }).status;

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    for (const who of ['alice', 'bob', 'carol', 'erin', 'frank', 'gina', 'eve']) await make('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
  });
  afterAll(() => server.close());

  it('an approval by someone no longer an approver does not count towards requiredApprovals', async () => {
    await make('teams', { metadata: { name: 'd2' }, spec: { owner: { user: 'bob' }, accessRequests: { requiredApprovals: 2, approvers: ['erin', 'frank'] } } });
    const name = await ask('alice', { team: 'd2', duration: '1h', reason: 'INC-2' });
    expect((await decide('frank', name)).status).toBe(200);
    // frank is taken out of the approvers: his approval is stale.
    expect((await patchTeam('d2', { accessRequests: { requiredApprovals: 2, approvers: ['erin'] } })).status).toBe(200);
    expect((await decide('erin', name)).status).toBe(200);
    expect((await phaseOf(name)).phase).toBe('Pending');
    // A second current approver makes it Active, and the status names those who counted.
    expect((await decide('bob', name)).status).toBe(200);
    const status = (await (await server.fetch(url(`accessrequests/${name}`))).json()) as { status: { phase: string; approvals: { user: string }[]; conditions: { type: string; message: string }[] } };
    expect(status.status.phase).toBe('Active');
    expect(status.status.approvals.map((a) => a.user)).toEqual(['frank', 'erin', 'bob']);
    expect(status.status.conditions.find((c) => c.type === 'Approved')?.message).toBe('approved by erin, bob');
  });

  it('approvers through a group of the owner team, and an administrator, still count', async () => {
    await make('teams', { metadata: { name: 'owners8' }, spec: { groups: ['sre'] } });
    await make('teams', { metadata: { name: 'd8' }, spec: { owner: { team: 'owners8' }, accessRequests: { requiredApprovals: 3 } } });
    for (const who of ['gwen', 'hank']) await make('ownedaccesskeys', { metadata: { name: `${who}-sre-key` }, spec: { user: who, groups: ['sre'], key: keyOf(who) } });
    const name = await ask('alice', { team: 'd8', duration: '1h', reason: 'INC-8' });
    expect((await decide(undefined, name)).status).toBe(200); // the administrator
    expect((await decide('gwen', name)).status).toBe(200);
    expect((await phaseOf(name)).phase).toBe('Pending');
    expect((await decide('hank', name)).status).toBe(200);
    expect((await phaseOf(name)).phase).toBe('Active');
  });
});
