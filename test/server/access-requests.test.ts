/**
 * AccessRequest over HTTP: alice asks for payments, bob (its owner) approves, alice holds what
 * payments members hold until expiresAt and nothing after it (her watch ends, the request turns
 * Expired, the Team is never written); and what is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { ManualClock } from '../support/clock.js';

const json = { 'Content-Type': 'application/json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;
const as = (who: string) => ({ ...json, Authorization: `Bearer ${keyOf(who)}` });

describe('AccessRequest', () => {
  let server: InProcess;
  const clock = new ManualClock('2026-11-27T10:00:00Z');
  const url = (path: string) => `${server.api}/${path}`;
  const post = (who: string, path: string, body: unknown) => server.fetch(url(path), { method: 'POST', headers: as(who), body: JSON.stringify(body) });
  const get = (who: string, path: string) => server.fetch(url(path), { headers: as(who) });
  const ask = (who: string, spec: Record<string, unknown>) => post(who, 'accessrequests', { apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { generateName: 'req-' }, spec });
  const decide = async (who: string, name: string, type: 'Approved' | 'Denied' = 'Approved') => {
    const current = (await (await server.fetch(url(`accessrequests/${name}`))).json()) as { status?: { conditions?: unknown[] } };
    const body = { ...current, status: { ...current.status, conditions: [...(current.status?.conditions ?? []), { type, status: 'True', reason: 'ByHand', message: 'looked at it' }] } };
    return server.fetch(url(`accessrequests/${name}/approval`), { method: 'PUT', headers: as(who), body: JSON.stringify(body) });
  };
  const make = async (path: string, body: unknown) => {
    const res = await server.fetch(url(path), { method: 'POST', headers: json, body: JSON.stringify(body) });
    expect(res.status, await res.clone().text()).toBe(201);
  };

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    // payments' members may update team ledger, and so manage its keys.
    await make('teams', { metadata: { name: 'payments' }, spec: { owner: { user: 'bob' }, users: ['carol'], accessRequests: { approvers: ['erin'] } } });
    await make('teams', { metadata: { name: 'ledger' }, spec: { access: [{ verbs: ['get', 'update'], teams: ['payments'], users: ['bob', 'erin'] }] } });
    await make('teams', { metadata: { name: 'vault' }, spec: { owner: { user: 'bob' }, accessRequests: { maxDuration: '1h', requiredApprovals: 2, approvers: ['erin'] } } });
    for (const who of ['alice', 'bob', 'eve', 'erin']) await make('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
    await make('ownedaccesskeys', { metadata: { name: 'ledger-ci' }, spec: { team: 'ledger' } });
  });
  afterAll(() => server.close());

  it('alice asks for payments for 3s, bob approves, she holds what members hold until expiry, then nothing; her watch ends and the Team is never written', async () => {
    const teamBefore = (await (await server.fetch(url('teams/payments'))).json()) as { metadata: { resourceVersion: string } };
    const asked = await ask('alice', { team: 'payments', duration: '3s', reason: 'INC-1234' });
    expect(asked.status).toBe(201);
    const request = (await asked.json()) as { metadata: { name: string }; spec: { user: string }; status: { phase: string } };
    expect(request.spec.user).toBe('alice');
    expect(request.status.phase).toBe('Pending');
    const name = request.metadata.name;
    expect((await get('alice', 'teams/ledger')).status).toBe(403);

    const approved = await decide('bob', name);
    expect(approved.status).toBe(200);
    const active = (await approved.json()) as { status: { phase: string; approvals: { user: string }[]; activatedAt: string; expiresAt: string; conditions: { type: string; status: string }[] } };
    expect(active.status).toMatchObject({ phase: 'Active', approvals: [{ user: 'bob' }], activatedAt: '2026-11-27T10:00:00Z', expiresAt: '2026-11-27T10:00:03Z' });
    expect(active.status.conditions).toContainEqual(expect.objectContaining({ type: 'Approved', status: 'True' }));

    // What payments members may do: read and update ledger, and see its team keys.
    expect((await get('alice', 'teams/ledger')).status).toBe(200);
    expect((await get('alice', 'ownedaccesskeys/ledger-ci')).status).toBe(200);
    const watch = await fetch(url('ownedaccesskeys?watch=true'), { headers: as('alice') });
    expect(watch.status).toBe(200);
    const reader = watch.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const untilLine = async (what: RegExp) => {
      while (!what.test(text)) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += decoder.decode(chunk.value, { stream: true });
      }
      return text;
    };
    expect(await untilLine(/"ADDED".*"ledger-ci"/)).toContain('ledger-ci');

    clock.advance(3_000);
    expect((await get('alice', 'teams/ledger')).status).toBe(403);
    expect((await get('alice', 'ownedaccesskeys/ledger-ci')).status).toBe(403);
    const lines = (await untilLine(/"ERROR"/)).trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { code?: number } });
    expect(lines.at(-1)).toMatchObject({ type: 'ERROR', object: { code: 410 } });
    expect((await reader.read()).done).toBe(true);

    // The leader's own sweep (every second of real time) may have recorded it already; this one makes sure.
    expect(['', name]).toContain((await server.accessRequestExpiry.sweep()).join());
    const ended = (await (await server.fetch(url(`accessrequests/${name}`))).json()) as { status: { phase: string; conditions: { type: string }[] } };
    expect(ended.status.phase).toBe('Expired');
    expect(ended.status.conditions.map((c) => c.type)).toEqual(['Approved', 'Expired']);
    const teamAfter = (await (await server.fetch(url('teams/payments'))).json()) as { metadata: { resourceVersion: string }; spec: { users: string[] } };
    expect(teamAfter.metadata.resourceVersion).toBe(teamBefore.metadata.resourceVersion);
    expect(teamAfter.spec.users).toEqual(['carol']);
  });

  it('refuses self-approval and approval by a non-approver, and accepts an approver the Team names', async () => {
    const name = ((await (await ask('alice', { team: 'payments', duration: '1h', reason: 'INC-1235' })).json()) as { metadata: { name: string } }).metadata.name;
    const self = await decide('alice', name);
    expect(self.status).toBe(403);
    expect(((await self.json()) as { message: string }).message).toContain('cannot update resource "accessrequests/approval"');
    const stranger = await decide('eve', name);
    expect(stranger.status).toBe(403);
    expect(((await (await server.fetch(url(`accessrequests/${name}`))).json()) as { status: { phase: string } }).status.phase).toBe('Pending');
    const byApprover = await decide('erin', name);
    expect(byApprover.status).toBe(200);
    expect(((await byApprover.json()) as { status: { phase: string } }).status.phase).toBe('Active');
  });

  it("refuses a duration past the team's maximum (8h by default, or the Team's), and one under a second", async () => {
    for (const [team, duration, max] of [['payments', '9h', '8h'], ['vault', '2h', '1h']] as const) {
      const res = await ask('alice', { team, duration, reason: 'INC-9' });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { message: string }).message).toContain(`is longer than team "${team}" allows (maxDuration ${max})`);
    }
    const short = await ask('alice', { team: 'payments', duration: '500ms', reason: 'INC-9' });
    expect(short.status).toBe(422);
    expect((await ask('alice', { team: 'payments', duration: '90m', reason: 'INC-9' })).status).toBe(201);
  });

  it('refuses an approval that would grant the requester what the approver does not hold', async () => {
    // gina owns team ops, which ledger's access rule names: approving a request for ops would give update on ledger.
    await make('teams', { metadata: { name: 'ops' }, spec: { owner: { user: 'gina' } } });
    const patched = await server.fetch(url('teams/ledger'), { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { access: [{ verbs: ['get', 'update'], teams: ['payments', 'ops'], users: ['bob', 'erin'] }] } }) });
    expect(patched.status).toBe(200);
    await make('ownedaccesskeys', { metadata: { name: 'gina-key' }, spec: { user: 'gina', key: keyOf('gina') } });
    const name = ((await (await ask('alice', { team: 'ops', duration: '1h', reason: 'INC-6' })).json()) as { metadata: { name: string } }).metadata.name;
    const refused = await decide('gina', name);
    expect(refused.status).toBe(403);
    // gina may not get ledger: the refusal does not name it (a review found it did).
    const message = ((await refused.json()) as { message: string }).message;
    expect(message).toContain('approving this request would grant rights on teams you may not read, which you do not hold');
    expect(message).not.toContain('ledger');
  });

  it('refuses a request for someone else without the right to add them, and allows it to the team owner', async () => {
    const refused = await ask('alice', { user: 'dave', team: 'payments', duration: '1h', reason: 'INC-7' });
    expect(refused.status).toBe(403);
    const byOwner = await ask('bob', { user: 'dave', team: 'payments', duration: '1h', reason: 'INC-7' });
    expect(byOwner.status).toBe(201);
    expect(((await byOwner.json()) as { spec: { user: string } }).spec.user).toBe('dave');
  });

  it("asks in another's name only with a key whose scope allows updating the team: one scoped to AccessRequests asks for its own user alone", async () => {
    const scopedKey = `BobScoped${'s'.repeat(40)}`;
    await make('ownedaccesskeys', { metadata: { name: 'bob-requests-only' }, spec: { user: 'bob', key: scopedKey, scope: { rules: [{ verbs: ['create', 'get'], resources: [{ group: 'management.service', resources: ['accessrequests'] }] }] } } });
    const withScoped = (spec: Record<string, unknown>) =>
      server.fetch(url('accessrequests'), { method: 'POST', headers: { ...json, Authorization: `Bearer ${scopedKey}` }, body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { generateName: 'req-' }, spec }) });
    const forDave = await withScoped({ user: 'dave', team: 'payments', duration: '1h', reason: 'INC-11' });
    expect(forDave.status).toBe(403);
    expect(((await forDave.json()) as { reason: string }).reason).toBe('Forbidden');
    expect((await withScoped({ team: 'ledger', duration: '1h', reason: 'INC-11' })).status).toBe(201);
  });

  it('counts a second approval by the same person once: a team needing two stays Pending until another approver approves', async () => {
    const name = ((await (await ask('alice', { team: 'vault', duration: '30m', reason: 'INC-8' })).json()) as { metadata: { name: string } }).metadata.name;
    expect((await decide('bob', name)).status).toBe(200);
    const twice = (await (await decide('bob', name)).json()) as { status: { phase: string; approvals: { user: string }[] } };
    expect(twice.status.phase).toBe('Pending');
    expect(twice.status.approvals.map((a) => a.user)).toEqual(['bob']);
    const second = (await (await decide('erin', name)).json()) as { status: { phase: string; approvals: { user: string }[] } };
    expect(second.status.phase).toBe('Active');
    expect(second.status.approvals.map((a) => a.user)).toEqual(['bob', 'erin']);
  });

  it('a Foreground or Orphan delete of a request removes it at once: the garbage collector works through the declared kinds only, so no one would take its finalizer', async () => {
    for (const policy of ['Foreground', 'Orphan']) {
      const name = ((await (await ask('alice', { team: 'payments', duration: '30m', reason: `INC-${policy}` })).json()) as { metadata: { name: string } }).metadata.name;
      const res = await server.fetch(url(`accessrequests/${name}?propagationPolicy=${policy}`), { method: 'DELETE', headers: as('alice') });
      expect(res.status).toBe(200);
      expect((await server.fetch(url(`accessrequests/${name}`))).status).toBe(404);
    }
  });
});

