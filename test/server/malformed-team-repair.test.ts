/**
 * A Team stored in a shape the schema refuses (past the API: a restore, a hand edit) can be
 * repaired through the API. The escalation check read the stored Team as it was, and a list
 * compared with one string threw: every PUT or patch of it was a 500, so the only way out was to
 * delete it, and a Team re-created under the name inherits none of its keys' trust.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredObject } from '../../src/store/types.js';
import { startInProcess, type InProcess } from './in-process.js';

let server: InProcess | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a Team stored in a shape the schema refuses', () => {
  it('is repaired by a merge patch and by a PUT through the API, each judged as a write that names its members anew', async () => {
    server = await startInProcess({ logger: (await import('pino')).default({ level: 'error' }) });
    const store = server.registry.teams.ctx.store;
    await store.create('/teams/odd', { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'odd', uid: 'uid-odd', creationTimestamp: '2026-11-01T00:00:00Z' }, spec: { users: 'alice', access: [null], clusterRoles: 'teams-viewer' } } as unknown as StoredObject);
    const patched = await server.fetch(`${server.api}/teams/odd`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { users: ['alice'], access: [], clusterRoles: [] } }) });
    expect(patched.status, await patched.clone().text()).toBe(200);
    const body = (await patched.json()) as { metadata: { uid: string; resourceVersion: string }; spec: { users: string[] } };
    expect(body.metadata.uid).toBe('uid-odd');
    expect(body.spec.users).toEqual(['alice']);
    // A PUT of a Team stored odd again.
    await store.guaranteedUpdate('/teams/odd', undefined, (cur) => ({ ...cur, spec: { groups: 'ops' } }) as unknown as StoredObject);
    const current = (await (await server.fetch(`${server.api}/teams/odd`)).json()) as { metadata: { resourceVersion: string } };
    const put = await server.fetch(`${server.api}/teams/odd`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'odd', resourceVersion: current.metadata.resourceVersion }, spec: { groups: ['ops'] } }) });
    expect(put.status, await put.clone().text()).toBe(200);
  });
});
