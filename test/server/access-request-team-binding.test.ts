/**
 * An AccessRequest grants membership of the team it was asked of, not of a team created later under
 * the same name (src/registry/request-binding.ts, auth/temporary-access.ts). Found by a review: a
 * break-glass request, still Active after its team was deleted, gave its requester the roles of a
 * new team of that name that nobody had approved her for (every key listed, the administrator's too).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestTeamUidAnnotation } from '../../src/api/access-request.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;
const as = (who: string) => ({ ...json, Authorization: `Bearer ${keyOf(who)}` });

type Obj = { metadata: { name: string; uid: string; annotations?: Record<string, string> }; status?: { phase?: string } };

describe('an AccessRequest and a team re-created under its name', () => {
  let server: InProcess;
  const clock = new ManualClock('2026-11-29T10:00:00Z');
  const url = (path: string) => `${server.api}/${path}`;
  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = json) => server.fetch(url(path), { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const made = async (path: string, body: unknown, headers: Record<string, string> = json): Promise<Obj> => {
    const res = await send('POST', path, body, headers);
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Obj;
  };
  const keysSeenBy = async (who: string) => {
    const res = await server.fetch(url('ownedaccesskeys'), { headers: as(who) });
    return res.status === 200 ? ((await res.json()) as { items: Obj[] }).items.map((k) => k.metadata.name) : res.status;
  };
  /** Deletes the team and creates another under its name, with `spec`: another uid. */
  const recreate = async (name: string, spec: unknown): Promise<Obj> => {
    expect((await send('DELETE', `teams/${name}`)).status).toBe(200);
    await eventually(`team ${name} is gone`, async () => (await server.fetch(url(`teams/${name}`))).status === 404, 5_000);
    return made('teams', { metadata: { name }, spec });
  };
  /** By the administrator, who holds every role a membership could confer. */
  const approve = async (name: string, type = 'Approved') => {
    const current = (await (await server.fetch(url(`accessrequests/${name}`))).json()) as { status?: { conditions?: unknown[] } };
    return send('PUT', `accessrequests/${name}/approval`, { ...current, status: { ...current.status, conditions: [...(current.status?.conditions ?? []), { type, status: 'True', reason: 'ByHand', message: 'seen' }] } });
  };

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    for (const who of ['rita', 'bob', 'sam']) await made('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
  });
  afterAll(() => server.close());

  it('a break-glass request Active when its team is deleted grants nothing on the team created after it under the name', async () => {
    const first = await made('teams', { metadata: { name: 'ops-x' }, spec: { clusterRoles: [{ name: 'teams-viewer' }], accessRequests: { breakGlass: { users: ['rita'] } } } });
    const request = await made('accessrequests', { metadata: { name: 'glass', annotations: { [requestTeamUidAnnotation]: 'a-uid-of-her-choosing' } }, spec: { team: 'ops-x', breakGlass: true, duration: '1h', reason: 'INC-7' } }, as('rita'));
    // The server binds the request to the team's uid, whatever the body said.
    expect(request.metadata.annotations).toEqual({ [requestTeamUidAnnotation]: first.metadata.uid });
    expect(request.status?.phase).toBe('Active');
    const during = await server.fetch(url('teams/ops-x'), { headers: as('rita') });
    expect(during.status).toBe(200);
    expect(during.headers.get('warning')).toMatch(/break-glass access to team \\"ops-x\\"/);
    expect(await keysSeenBy('rita')).toEqual(['rita-key']);

    const second = await recreate('ops-x', { clusterRoles: [{ name: 'accesskeys-admin' }] });
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
    // Still Active until its hour is out, and bound to the first team: rita holds nothing of the second.
    expect(((await (await server.fetch(url('accessrequests/glass'))).json()) as Obj).status?.phase).toBe('Active');
    expect(await keysSeenBy('rita')).toEqual(['rita-key']);
    const after = await server.fetch(url('ownedaccesskeys/admin'), { headers: as('rita') });
    expect(after.status).toBe(403);
    expect(after.headers.get('warning')).toBeNull();
  });

  it('the binding is the server’s: an update of the request keeps it, whatever it writes', async () => {
    const team = (await (await server.fetch(url('teams/ops-x'))).json()) as Obj;
    await send('PUT', 'teams/ops-x', { ...team, spec: { ...(team as unknown as { spec: object }).spec, accessRequests: { approvers: ['bob'] } } });
    const asked = await made('accessrequests', { metadata: { name: 'plain' }, spec: { team: 'ops-x', duration: '1h', reason: 'deploy' } }, as('rita'));
    expect(asked.metadata.annotations?.[requestTeamUidAnnotation]).toBe(team.metadata.uid);
    for (const value of ['another-uid', null]) {
      // By the administrator, who may write anything else of it.
      const patched = await send('PATCH', 'accessrequests/plain', { metadata: { annotations: { [requestTeamUidAnnotation]: value, note: 'x' } } }, { 'Content-Type': 'application/merge-patch+json' });
      expect(patched.status, await patched.clone().text()).toBe(200);
      expect(((await patched.json()) as Obj).metadata.annotations).toEqual({ [requestTeamUidAnnotation]: team.metadata.uid, note: 'x' });
    }
  });

  it('a request still Pending when its team is re-created cannot be approved (403, saying why), and can be denied', async () => {
    await recreate('ops-x', { clusterRoles: [{ name: 'accesskeys-admin' }], accessRequests: { approvers: ['bob'] } });
    const refused = await approve('plain');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toContain('request "plain" was asked of an earlier team "ops-x", deleted since: it grants nothing on the team of that name now; ask again');
    expect(((await (await server.fetch(url('accessrequests/plain'))).json()) as Obj).status?.phase).toBe('Pending');
    const denied = await approve('plain', 'Denied');
    expect(denied.status, await denied.clone().text()).toBe(200);
    expect(((await denied.json()) as Obj).status?.phase).toBe('Denied');
    // A request asked of the team as it is now is approved and grants its roles.
    await made('accessrequests', { metadata: { name: 'again' }, spec: { team: 'ops-x', duration: '1h', reason: 'deploy' } }, as('sam'));
    expect((await approve('again')).status).toBe(200);
    expect(await keysSeenBy('sam')).toContain('admin');
  });

  it('a request stored before requests were bound is judged by creation times: granted on the team it came after, not on one created later', async () => {
    const team = (await (await server.fetch(url('teams/ops-x'))).json()) as Obj & { metadata: { creationTimestamp: string } };
    const stored = (name: string, user: string, createdAt: string) =>
      server.registry.store.create(`/accessrequests/${name}`, {
        apiVersion: 'management.service/v1',
        kind: 'AccessRequest',
        metadata: { name, uid: `uid-${name}`, creationTimestamp: createdAt },
        spec: { user, team: 'ops-x', duration: '1h', reason: 'legacy' },
        status: { phase: 'Active', activatedAt: createdAt, expiresAt: '2026-11-29T11:00:00Z' },
      });
    const teamMade = Date.parse(team.metadata.creationTimestamp);
    await stored('legacy-before', 'rita', new Date(teamMade - 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    await stored('legacy-after', 'bob', new Date(teamMade).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    expect(await keysSeenBy('rita')).toEqual(['rita-key']);
    expect(await keysSeenBy('bob')).toContain('admin');
  });
});
