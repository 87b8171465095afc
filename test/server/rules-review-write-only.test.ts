/**
 * Found by the review of stop 64's rules-review change: naming only the objects a caller may `get`
 * dropped a team whose access rule gives a user update, patch and delete without get (a
 * SelfSubjectAccessReview said allowed, the rules review named nothing and said complete). The
 * review names every object the caller holds a verb on, found by the same indexes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const bobKey = `BobKey${'q'.repeat(40)}`;
const asBob = { ...json, Authorization: `Bearer ${bobKey}` };

describe('rules review of a write-only access rule', () => {
  let server: InProcess;
  const authz = () => `${server.base}/kubernetes/management/apis/authorization.k8s.io/v1`;
  const url = (p: string) => `${server.api}/${p}`;

  beforeAll(async () => {
    server = await startInProcess();
    const team = await server.fetch(url('teams'), { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'ops' }, spec: { owner: { user: 'admin' }, access: [{ users: ['bob'], verbs: ['update', 'patch', 'delete'] }] } }) });
    expect(team.status, await team.clone().text()).toBe(201);
    expect((await server.fetch(url('ownedaccesskeys'), { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'bob' }, spec: { user: 'bob', key: bobKey } }) })).status).toBe(201);
  });
  afterAll(() => server.close());

  it('is named in the review with the verbs held', async () => {
    const can = await server.fetch(`${authz()}/selfsubjectaccessreviews`, { method: 'POST', headers: asBob, body: JSON.stringify({ kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'delete', group: 'management.service', resource: 'teams', name: 'ops' } } }) });
    expect(((await can.json()) as { status: { allowed: boolean } }).status.allowed).toBe(true);
    // bob really may patch it.
    const patched = await server.fetch(url('teams/ops'), { method: 'PATCH', headers: { ...asBob, 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { labels: { a: 'b' } } }) });
    expect(patched.status, await patched.clone().text()).toBe(200);

    const res = await server.fetch(`${authz()}/selfsubjectrulesreviews`, { method: 'POST', headers: asBob, body: JSON.stringify({ kind: 'SelfSubjectRulesReview', spec: {} }) });
    const status = ((await res.json()) as { status: { resourceRules: { resources: string[]; verbs: string[]; resourceNames?: string[] }[]; incomplete: boolean } }).status;
    const onOps = status.resourceRules.filter((r) => r.resources.includes('teams') && (r.resourceNames ?? []).includes('ops'));
    expect({ onOps: onOps.map((r) => ({ verbs: [...r.verbs].sort(), names: r.resourceNames })), incomplete: status.incomplete }).toEqual({ onOps: [{ verbs: ['delete', 'patch', 'update'], names: ['ops'] }], incomplete: false });
  });
});
