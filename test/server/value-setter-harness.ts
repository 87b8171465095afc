/**
 * What the value-setter tests share (docs/access-requests.md, "Temporary access rides only on keys
 * the user or an administrator set"): keys named after their users, requests for team prod-admins
 * approved by the administrator, and the recorded setter of a key.
 */
import { expect } from 'vitest';
import type { InProcess } from '../support/in-process.js';

export const json = { 'Content-Type': 'application/json' };
export const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1).replace(/[^A-Za-z0-9]/g, '')}Key${'k'.repeat(40)}`;
export const bearer = (value: string) => ({ ...json, Authorization: `Bearer ${value}` });
export const as = (who: string) => bearer(keyOf(who));
export const setBy = 'management.service/value-set-by';
export type Obj = { message?: string; spec?: { key?: string }; metadata?: { annotations?: Record<string, string>; resourceVersion?: string } };

/** Requests against the server `server()` returns (set in a beforeAll), as the administrator unless headers say otherwise. */
export function valueSetterHarness(server: () => InProcess) {
  const url = (path: string) => `${server().api}/${path}`;
  const send = async (method: string, path: string, body: unknown, headers: Record<string, string> = json) => {
    const res = await server().fetch(url(path), { method, headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Obj };
  };
  const post = (path: string, body: unknown, headers?: Record<string, string>) => send('POST', path, body, headers);
  const made = async (path: string, body: unknown, headers?: Record<string, string>) => {
    const r = await post(path, body, headers);
    expect(r.status, r.body.message).toBe(201);
    return r.body;
  };
  const read = async (path: string) => (await (await server().fetch(url(path))).json()) as Obj;
  const setterOf = async (name: string) => (await read(`ownedaccesskeys/${name}`)).metadata?.annotations?.[setBy];
  /** The administrator approves the request `name`. */
  const approve = async (name: string) => {
    const seen = (await (await server().fetch(url(`accessrequests/${name}`))).json()) as { status?: { conditions?: unknown[] } };
    const approval = { ...seen, status: { ...seen.status, conditions: [...(seen.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'ByHand', message: 'ok' }] } };
    expect((await server().fetch(url(`accessrequests/${name}/approval`), { method: 'PUT', headers: json, body: JSON.stringify(approval) })).status).toBe(200);
  };
  /** `who` asks for prod-admins with its own key (request `<who>-prod`), and is approved. */
  const onCall = async (who: string) => {
    const r = await post('accessrequests', { apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { name: `${who}-prod` }, spec: { team: 'prod-admins', duration: '4h', reason: 'INC-9' } }, as(who));
    expect(r.status, r.body.message).toBe(201);
    await approve(`${who}-prod`);
  };
  return { url, send, post, made, read, setterOf, approve, onCall };
}
