/**
 * Names reused under AccessRequests, found by a review of what outlives a deleted object:
 * - an approval is of the request the approver read: withdrawn and asked again under its name (for
 *   more), the old body is refused 409, as kube's uid and resourceVersion preconditions answer;
 * - the owner of a team created under the name of a deleted one neither reads, reviews nor deletes
 *   the earlier team's requests (a break-glass use that owes its review among them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;
const as = (who: string) => ({ ...json, Authorization: `Bearer ${keyOf(who)}` });

type Request = { metadata: { name: string; uid: string; resourceVersion: string }; spec: { roles?: string[] }; status: { phase: string; conditions?: unknown[] } };

describe('AccessRequest names reused', () => {
  let server: InProcess;
  const clock = new ManualClock('2026-11-29T10:00:00Z');
  const url = (path: string) => `${server.api}/${path}`;
  const send = (method: string, path: string, headers: Record<string, string>, body?: unknown) => server.fetch(url(path), { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const made = async (path: string, body: unknown, headers: Record<string, string> = json) => {
    const res = await send('POST', path, headers, body);
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Request;
  };
  const read = async (who: string, name: string) => (await (await send('GET', `accessrequests/${name}`, as(who))).json()) as Request;
  const decide = (who: string, seen: Request, type = 'Approved') =>
    send('PUT', `accessrequests/${seen.metadata.name}/approval`, as(who), { ...seen, status: { ...seen.status, conditions: [...(seen.status.conditions ?? []), { type, status: 'True', reason: 'ByHand', message: 'ok' }] } });

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    for (const who of ['ann', 'bob', 'carl', 'mallory', 'alice']) await made('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
    // bob owns ops and holds what its membership confers (he approves); mallory may create teams.
    await made('teams', { metadata: { name: 'ops' }, spec: { owner: { user: 'bob' }, clusterRoles: [{ name: 'teams-viewer' }, { name: 'accesskeys-admin' }] } });
    await made('teams', { metadata: { name: 'bob-admin' }, spec: { users: ['bob'], clusterRoles: [{ name: 'management-admin' }] } });
    await made('teams', { metadata: { name: 'creators' }, spec: { users: ['mallory'], clusterRoles: [{ name: 'teams-creator' }] } });
  });
  afterAll(() => server.close());

  it('an approval of a request withdrawn and asked again under its name since it was read is refused 409, and grants nothing', async () => {
    await made('accessrequests', { metadata: { name: 'r1' }, spec: { team: 'ops', roles: ['teams-viewer'], duration: '10m', reason: 'look at a team' } }, as('ann'));
    const seen = await read('bob', 'r1');
    expect(seen.spec.roles).toEqual(['teams-viewer']);
    // ann withdraws it, and asks again under its name for the whole membership, for eight hours.
    expect((await send('DELETE', 'accessrequests/r1', as('ann'))).status).toBe(200);
    await eventually('r1 is gone', async () => (await send('GET', 'accessrequests/r1', json)).status === 404, 5_000);
    const again = await made('accessrequests', { metadata: { name: 'r1' }, spec: { team: 'ops', duration: '8h', reason: 'look at a team' } }, as('ann'));
    const refused = await decide('bob', seen);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { reason: string; message: string })).toMatchObject({
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on accessrequests.management.service "r1": Precondition failed: UID in precondition: ${seen.metadata.uid}, UID in object meta: ${again.metadata.uid}`,
    });
    expect((await read('ann', 'r1')).status.phase).toBe('Pending');
    expect((await send('GET', 'ownedaccesskeys/bob-key', as('ann'))).status).toBe(403);
  });

  it('an approval of a version older than the one stored is refused 409; of the version read, it lands', async () => {
    const seen = await read('bob', 'r1');
    // Another write since bob read it (a label by its requester's tooling, here the administrator).
    expect((await send('PATCH', 'accessrequests/r1', { 'Content-Type': 'application/merge-patch+json' }, { metadata: { labels: { ticket: 'INC-9' } } })).status).toBe(200);
    const stale = await decide('bob', seen);
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { message: string }).message).toContain('the object has been modified');
    const fresh = await decide('bob', await read('bob', 'r1'));
    expect(fresh.status, await fresh.clone().text()).toBe(200);
    expect(((await fresh.json()) as Request).status.phase).toBe('Active');
  });

  it("the owner of a team created under a deleted team's name cannot read, review or delete its break-glass record", async () => {
    await made('teams', { metadata: { name: 'prod' }, spec: { owner: { user: 'carl' }, accessRequests: { breakGlass: { users: ['alice'] } } } });
    const glass = await made('accessrequests', { metadata: { name: 'glass' }, spec: { team: 'prod', breakGlass: true, duration: '30m', reason: 'INC-1: the secret reason' } }, as('alice'));
    expect(glass.status.phase).toBe('Active');
    expect((await send('GET', 'accessrequests/glass', as('carl'))).status).toBe(200);
    expect((await send('DELETE', 'teams/prod', json)).status).toBe(200);
    await eventually('prod is gone', async () => (await send('GET', 'teams/prod', json)).status === 404, 5_000);
    await made('teams', { metadata: { name: 'prod' }, spec: { owner: { user: 'mallory' } } }, as('mallory'));
    expect((await send('GET', 'accessrequests/glass', as('mallory'))).status).toBe(403);
    const listed = (await (await send('GET', 'accessrequests', as('mallory'))).json()) as { items: Request[] };
    expect(listed.items.map((i) => i.metadata.name)).toEqual([]);
    expect((await decide('mallory', await read('alice', 'glass'))).status).toBe(403);
    expect((await send('DELETE', 'accessrequests/glass', as('mallory'))).status).toBe(403);
    // Its requester still sees it, and it still owes its review.
    const kept = await read('alice', 'glass');
    expect(kept.status.conditions).toContainEqual(expect.objectContaining({ type: 'NeedsReview', status: 'True' }));
  });
});
