/**
 * Impersonation headers kubectl cannot send on its own: groups without a user (400, before any
 * right is looked at), a uid and extras (authorized as kube's uids and userextras, and recorded in
 * the audit event's impersonatedUser).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/api/audit-event.js';
import { readEvents, startInProcess, type InProcess } from './in-process.js';

describe('Impersonate-* headers over HTTP', () => {
  let server: InProcess;
  const json = { 'Content-Type': 'application/json' };

  beforeAll(async () => {
    server = await startInProcess({ audit: true });
  });
  afterAll(async () => {
    await server.close();
  });

  it('groups, a uid or extras without Impersonate-User are 400', async () => {
    for (const headers of [{ 'Impersonate-Group': 'eng' }, { 'Impersonate-Uid': '42' }, { 'Impersonate-Extra-Scopes': 'view' }] as Record<string, string>[]) {
      const res = await server.fetch(`${server.api}/teams`, { headers });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toBe('Impersonate-Group, Impersonate-Uid and Impersonate-Extra-* require Impersonate-User');
    }
  });

  it('an extra named __proto__, constructor or toString is a key like any other (each was a 500)', async () => {
    for (const name of ['Impersonate-Extra-__proto__', 'Impersonate-Extra-constructor', 'Impersonate-Extra-toString']) {
      const res = await server.fetch(`${server.api}/teams`, { headers: { 'Impersonate-User': 'bob', [name]: 'x' } });
      expect(res.status, name).toBe(200);
    }
  });

  it('a write with a uid and extras is audited with the impersonator as user and all it asked as impersonatedUser', async () => {
    const headers = { ...json, 'Impersonate-User': 'dana', 'Impersonate-Uid': 'u-42', 'Impersonate-Extra-Example.com%2fReason': 'ticket-7' };
    const made = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers, body: JSON.stringify({ metadata: { name: 'dana-key' }, spec: { user: 'dana' } }) });
    expect(made.status).toBe(201);
    const res = await server.fetch(`${server.base}/kubernetes/management/apis/audit.management.service/v1/events?resource=ownedaccesskeys&name=dana-key`);
    const [event] = ((await res.json()) as { items: AuditEvent[] }).items;
    expect(event!.user).toMatchObject({ username: 'admin' });
    expect(event!.impersonatedUser).toEqual({ username: 'dana', uid: 'u-42', extra: { 'example.com/reason': ['ticket-7'] } });
  });

  it('a watch opened as another user is kept as that user: it sees what they may, and is not ended as if its rights changed', async () => {
    const controller = new AbortController();
    const res = await server.fetch(`${server.api}/teams?watch=true`, { headers: { 'Impersonate-User': 'carla' }, signal: controller.signal });
    expect(res.status).toBe(200);
    // Made after the watch began: the first carla may not read, the second she owns.
    for (const [name, owner] of [['not-carlas', 'zed'], ['carlas', 'carla']]) {
      const made = await server.fetch(`${server.api}/teams`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, spec: { owner: { user: owner } } }) });
      expect(made.status).toBe(201);
    }
    const [event] = await readEvents(res, 1);
    controller.abort();
    expect({ type: event!.type, name: (event!.object.metadata as { name?: string } | undefined)?.name }).toEqual({ type: 'ADDED', name: 'carlas' });
  });
});
