/**
 * Break-glass AccessRequests over HTTP: active at once without approval on a team that allows it,
 * loud (a Warning header on every request made with it, a watch too), and listed as owing a review
 * until an approver of the team reviews it; refused where the Team does not allow it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { ManualClock } from '../support/clock.js';

const json = { 'Content-Type': 'application/json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;
const as = (who: string) => ({ ...json, Authorization: `Bearer ${keyOf(who)}` });
const table = 'application/json;as=Table;v=v1;g=meta.k8s.io';

type Request = { metadata: { name: string }; status: { phase: string; approvals: unknown[]; activatedAt: string; expiresAt: string; conditions: { type: string; status: string; reason?: string; message?: string }[] } };

describe('break-glass AccessRequest', () => {
  let server: InProcess;
  const clock = new ManualClock('2026-11-27T10:00:00Z');
  const url = (path: string) => `${server.api}/${path}`;
  const get = (who: string, path: string, headers: Record<string, string> = {}) => server.fetch(url(path), { headers: { ...as(who), ...headers } });
  const ask = (who: string, spec: Record<string, unknown>) =>
    server.fetch(url('accessrequests'), { method: 'POST', headers: as(who), body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { generateName: 'glass-' }, spec }) });
  const review = async (who: string, name: string) => {
    const current = (await (await server.fetch(url(`accessrequests/${name}`))).json()) as Request;
    const body = { ...current, status: { ...current.status, conditions: [...current.status.conditions, { type: 'Approved', status: 'True', reason: 'Reviewed', message: 'looked at it' }] } };
    return server.fetch(url(`accessrequests/${name}/approval`), { method: 'PUT', headers: as(who), body: JSON.stringify(body) });
  };
  const owing = async () => ((await (await get('bob', 'accessrequests?fieldSelector=needsReview%3Dtrue')).json()) as { items: Request[] }).items.map((i) => i.metadata.name);
  const make = async (path: string, body: unknown) => {
    const res = await server.fetch(url(path), { method: 'POST', headers: json, body: JSON.stringify(body) });
    expect(res.status, await res.clone().text()).toBe(201);
  };

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    // payments' members may update team ledger; alice may break the glass on payments.
    await make('teams', { metadata: { name: 'payments' }, spec: { owner: { user: 'bob' }, accessRequests: { breakGlass: { users: ['alice', 'bob'] } } } });
    await make('teams', { metadata: { name: 'ledger' }, spec: { access: [{ verbs: ['get', 'update', 'patch'], teams: ['payments', 'ops'], users: ['bob'] }] } });
    await make('teams', { metadata: { name: 'vault' }, spec: { owner: { user: 'bob' } } });
    await make('teams', { metadata: { name: 'ops' }, spec: { owner: { user: 'gina' } } });
    for (const who of ['alice', 'bob', 'eve', 'gina']) await make('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
  });
  afterAll(() => server.close());

  it('is Active at once, warns on every request made with it, and owes a review until the owner reviews it', async () => {
    const before = await get('alice', 'teams/ledger');
    expect(before.status).toBe(403);
    expect(before.headers.get('warning')).toBeNull();

    const asked = await ask('alice', { team: 'payments', breakGlass: true, duration: '30m', reason: 'INC-1 payments down' });
    expect(asked.status, await asked.clone().text()).toBe(201);
    const request = (await asked.json()) as Request;
    const name = request.metadata.name;
    expect(request.status).toMatchObject({ phase: 'Active', approvals: [], activatedAt: '2026-11-27T10:00:00Z', expiresAt: '2026-11-27T10:30:00Z' });
    expect(request.status.conditions).toContainEqual(expect.objectContaining({ type: 'NeedsReview', status: 'True', reason: 'BreakGlass' }));

    // Every request made with it says so: a read, a list, a write, a watch.
    const warning = new RegExp(`^299 - "break-glass access to team \\\\"payments\\\\" \\(AccessRequest ${name}\\) until 2026-11-27T10:30:00.000Z: this request is recorded and owes a review"$`);
    const read = await get('alice', 'teams/ledger');
    expect(read.status).toBe(200);
    expect(read.headers.get('warning')).toMatch(warning);
    expect((await get('alice', 'teams')).headers.get('warning')).toMatch(warning);
    const write = await server.fetch(url('teams/ledger'), { method: 'PATCH', headers: { ...as('alice'), 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { description: 'touched during INC-1' } }) });
    expect(write.status).toBe(200);
    expect(write.headers.get('warning')).toMatch(warning);
    const watch = await fetch(url('teams?watch=true'), { headers: as('alice') });
    expect(watch.status).toBe(200);
    expect(watch.headers.get('warning')).toMatch(warning);
    await watch.body!.cancel();
    // Standing access alone carries no warning.
    expect((await get('bob', 'teams/ledger')).headers.get('warning')).toBeNull();

    // Listed as owing a review: a field selector, and a column of kubectl get.
    expect(await owing()).toEqual([name]);
    const rows = (await (await get('bob', `accessrequests/${name}`, { Accept: table })).json()) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    expect(rows.rows[0]!.cells[rows.columnDefinitions.findIndex((c) => c.name === 'Review')]).toBe('Owed');
    const deleted = await server.fetch(url(`accessrequests/${name}`), { method: 'DELETE', headers: as('alice') });
    expect(deleted.status).toBe(403);
    expect(((await deleted.json()) as { message: string }).message).toContain(`break-glass request "${name}" owes a review by an approver of team "payments" and cannot be deleted before it`);

    // Only an approver reviews it, never its own user; the review ends nothing.
    expect((await review('alice', name)).status).toBe(403);
    expect(await owing()).toEqual([name]);
    const reviewed = await review('bob', name);
    expect(reviewed.status).toBe(200);
    const after = (await reviewed.json()) as Request;
    expect(after.status.phase).toBe('Active');
    expect(after.status.conditions).toContainEqual(expect.objectContaining({ type: 'NeedsReview', status: 'False', reason: 'Reviewed', message: 'reviewed by bob' }));
    expect(await owing()).toEqual([]);
    const done = (await (await get('bob', `accessrequests/${name}`, { Accept: table })).json()) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    expect(done.rows[0]!.cells[done.columnDefinitions.findIndex((c) => c.name === 'Review')]).toBe('Done');

    // The access ends on time, and with it the warning.
    clock.advance(30 * 60_000);
    const ended = await get('alice', 'teams/ledger');
    expect(ended.status).toBe(403);
    expect(ended.headers.get('warning')).toBeNull();
  });

  it('is refused on a team that does not allow it, to a user it does not name, for someone else, and past its short maximum', async () => {
    // alice may not read vault: whether it has break-glass users at all is not hers to learn (stop 64).
    const closed = await ask('alice', { team: 'vault', breakGlass: true, duration: '10m', reason: 'INC-2' });
    expect(closed.status).toBe(403);
    expect(((await closed.json()) as { message: string }).message).toContain('break-glass access to team "vault" is only for the users its spec.accessRequests.breakGlass.users names');
    const stranger = await ask('eve', { team: 'payments', breakGlass: true, duration: '10m', reason: 'INC-2' });
    expect(stranger.status).toBe(403);
    expect(((await stranger.json()) as { message: string }).message).toContain('break-glass access to team "payments" is only for the users its spec.accessRequests.breakGlass.users names');
    const forOther = await ask('bob', { user: 'alice', team: 'payments', breakGlass: true, duration: '10m', reason: 'INC-2' });
    expect(forOther.status).toBe(403);
    const tooLong = await ask('alice', { team: 'payments', breakGlass: true, duration: '2h', reason: 'INC-2' });
    expect(tooLong.status).toBe(422);
    expect(((await tooLong.json()) as { message: string }).message).toContain('a break-glass request lasts at most 3600s on team "payments"');
    expect(((await (await get('bob', 'accessrequests')).json()) as { items: unknown[] }).items).toHaveLength(1);
  });

  it('still owes its review once Expired, and takes it then', async () => {
    const name = ((await (await ask('alice', { team: 'payments', breakGlass: true, duration: '10m', reason: 'INC-3' })).json()) as Request).metadata.name;
    clock.advance(10 * 60_000);
    await server.accessRequestExpiry.sweep();
    expect(((await (await get('bob', `accessrequests/${name}`)).json()) as Request).status.phase).toBe('Expired');
    expect(await owing()).toEqual([name]);
    const reviewed = (await (await review('bob', name)).json()) as Request;
    expect(reviewed.status.phase).toBe('Expired');
    expect(reviewed.status.conditions).toContainEqual(expect.objectContaining({ type: 'NeedsReview', status: 'False', message: 'reviewed by bob' }));
    expect(await owing()).toEqual([]);
  });

  it('judges naming a break-glass user as adding a member: the writer must hold what membership confers', async () => {
    // gina owns ops, which ledger's access rule names, and holds nothing on ledger herself.
    const patch = (spec: unknown) => server.fetch(url('teams/ops'), { method: 'PATCH', headers: { ...as('gina'), 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec }) });
    const member = await patch({ users: ['eve'] });
    expect(member.status).toBe(403);
    const glass = await patch({ accessRequests: { breakGlass: { users: ['eve'] } } });
    expect(glass.status).toBe(403);
    expect(((await glass.json()) as { message: string }).message).toBe(((await member.json()) as { message: string }).message);
  });
});
