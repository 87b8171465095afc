/**
 * Kept from a review of stop 64's value-setter change, which found it holding: no client write
 * (POST, dry run, server-side apply, JSON patch, PUT, status) sets or removes
 * management.service/value-set-by.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { keyOf, setBy } from './value-setter-harness.js';


describe('forging the value setter', () => {
  let server: InProcess;
  const url = (path: string) => `${server.api}/${path}`;
  const send = async (method: string, path: string, body: unknown, type = 'application/json', who = 'keymaster') => {
    const res = await server.fetch(url(path), { method, headers: { 'Content-Type': type, Authorization: `Bearer ${keyOf(who)}` }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { message?: string; metadata?: { annotations?: Record<string, string>; resourceVersion?: string } } };
  };
  const stored = async (name: string) => ((await (await server.fetch(url(`ownedaccesskeys/${name}`))).json()) as { metadata: { annotations?: Record<string, string> } }).metadata.annotations?.[setBy];

  beforeAll(async () => {
    server = await startInProcess();
    const json = { 'Content-Type': 'application/json' };
    expect((await server.fetch(url('teams'), { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'keyadmins' }, spec: { users: ['keymaster'], clusterRoles: [{ name: 'accesskeys-admin' }, { name: 'teams-viewer' }] } }) })).status).toBe(201);
    expect((await server.fetch(url('ownedaccesskeys'), { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'km' }, spec: { user: 'keymaster', key: keyOf('keymaster') } }) })).status).toBe(201);
  });
  afterAll(() => server.close());

  it('POST, dry run, server-side apply (create and update), JSON patch, PUT, status all keep the server record', async () => {
    const forged = { 'management.service/value-set-by': 'user:dan' };
    const created = await send('POST', 'ownedaccesskeys', { metadata: { name: 'd1', annotations: forged }, spec: { user: 'dan' } });
    expect(created.status).toBe(201);
    expect(created.body.metadata!.annotations![setBy]).toBe('user:keymaster');
    const dry = await send('POST', 'ownedaccesskeys?dryRun=All', { metadata: { name: 'd2', annotations: forged }, spec: { user: 'dan' } });
    expect(dry.body.metadata!.annotations![setBy]).toBe('user:keymaster');
    const yaml = (name: string) => `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ${name}\n  annotations:\n    management.service/value-set-by: "user:dan"\nspec:\n  user: dan\n`;
    const applied = await send('PATCH', 'ownedaccesskeys/d3?fieldManager=x', yaml('d3'), 'application/apply-patch+yaml');
    expect(applied.status, applied.body.message).toBe(201);
    expect(await stored('d3')).toBe('user:keymaster');
    const reapplied = await send('PATCH', 'ownedaccesskeys/d1?fieldManager=x&force=true', yaml('d1'), 'application/apply-patch+yaml');
    expect(reapplied.status, reapplied.body.message).toBe(200);
    expect(await stored('d1')).toBe('user:keymaster');
    const jp = await send('PATCH', 'ownedaccesskeys/d1', [{ op: 'replace', path: `/metadata/annotations/management.service~1value-set-by`, value: 'user:dan' }], 'application/json-patch+json');
    expect(jp.status, jp.body.message).toBe(200);
    expect(await stored('d1')).toBe('user:keymaster');
    const remove = await send('PATCH', 'ownedaccesskeys/d1', [{ op: 'remove', path: `/metadata/annotations/management.service~1value-set-by` }], 'application/json-patch+json');
    expect(remove.status, remove.body.message).toBe(200);
    expect(await stored('d1')).toBe('user:keymaster');
    const cur = (await (await server.fetch(url('ownedaccesskeys/d1'))).json()) as { metadata: Record<string, unknown> };
    const status = await server.fetch(url('ownedaccesskeys/d1/status'), { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ...cur, metadata: { ...cur.metadata, annotations: forged } }) });
    expect(status.status).toBe(200);
    expect(await stored('d1')).toBe('user:keymaster');
  });
});
