/**
 * Kept from a review of stop 64's fixes, which found it holding: a key's previous value hands no access on through any Team write (create with members, server-side apply, a JSON patch adding an access rule, approvers), and a plain edit stays open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const old = `BotKey${'k'.repeat(40)}`;

describe("a previous value's team writes", () => {
  let server: InProcess;
  const url = (path: string) => `${server.api}/${path}`;
  const send = async (method: string, path: string, body: unknown, type = 'application/json', key = old) => {
    const res = await server.fetch(url(path), { method, headers: { 'Content-Type': type, Authorization: `Bearer ${key}` }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { message?: string; spec?: { key?: string } } };
  };

  beforeAll(async () => {
    server = await startInProcess();
    expect((await server.fetch(url('teams'), { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'bots' }, spec: { users: ['bot'], clusterRoles: [{ name: 'teams-admin' }] } }) })).status).toBe(201);
    expect((await server.fetch(url('ownedaccesskeys'), { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'bot-key' }, spec: { user: 'bot', key: old } }) })).status).toBe(201);
    expect((await server.fetch(url('teams'), { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'app' }, spec: { displayName: 'App', users: ['x'] } }) })).status).toBe(201);
    const r = await server.fetch(url('ownedaccesskeys/bot-key/rotation'), { method: 'POST', headers: json, body: JSON.stringify({ kind: 'KeyRotation', spec: { overlapSeconds: 3600 } }) });
    expect(r.status).toBe(201);
  });
  afterAll(() => server.close());

  it('refuses a create with members, an apply adding a member, a JSON patch adding an access rule; allows a description', async () => {
    expect((await send('POST', 'teams', { metadata: { name: 'new' }, spec: { users: ['mallory'] } })).status).toBe(403);
    const apply = await send('PATCH', 'teams/app?fieldManager=m&force=true', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: app\nspec:\n  users: [x, mallory]\n', 'application/apply-patch+yaml');
    expect(apply.status, apply.body.message).toBe(403);
    const ssaCreate = await send('PATCH', 'teams/new2?fieldManager=m', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: new2\nspec:\n  owner: {user: mallory}\n', 'application/apply-patch+yaml');
    expect(ssaCreate.status, ssaCreate.body.message).toBe(403);
    const jp = await send('PATCH', 'teams/app', [{ op: 'add', path: '/spec/access', value: [{ teams: ['bots'], verbs: ['update'] }] }], 'application/json-patch+json');
    expect(jp.status, jp.body.message).toBe(403);
    const mp = await send('PATCH', 'teams/app', { spec: { accessRequests: { approvers: ['mallory'] } } }, 'application/merge-patch+json');
    expect(mp.status, mp.body.message).toBe(403);
    expect((await send('PATCH', 'teams/app', { spec: { description: 'ok' } }, 'application/merge-patch+json')).status).toBe(200);
    expect((await send('POST', 'teams', { metadata: { name: 'plain' }, spec: { displayName: 'Plain' } })).status).toBe(201);
  });
});
