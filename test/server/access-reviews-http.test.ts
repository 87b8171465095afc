/** The review endpoints over plain HTTP: JSON bodies, bad bodies (a 400 Status), and verbs other than POST. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from './in-process.js';

describe('access review endpoints', () => {
  let server: InProcess;
  const authz = () => `${server.base}/kubernetes/management/apis/authorization.k8s.io/v1`;
  const post = (url: string, body: string, type = 'application/json') => server.fetch(url, { method: 'POST', headers: { 'Content-Type': type }, body });

  beforeAll(async () => {
    server = await startInProcess();
  });
  afterAll(() => server.close());

  it('answers a JSON SelfSubjectAccessReview with 201 and its status', async () => {
    const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'delete', group: 'management.service', resource: 'teams', name: 'admins' } } };
    const res = await post(`${authz()}/selfsubjectaccessreviews`, JSON.stringify(review));
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ kind: 'SelfSubjectAccessReview', spec: review.spec, status: { allowed: true } });
    const other = await post(`${authz()}/selfsubjectaccessreviews`, JSON.stringify({ ...review, spec: { resourceAttributes: { verb: 'get', group: 'apps', resource: 'deployments' } } }));
    expect(await other.json()).toMatchObject({ status: { allowed: false, reason: 'this server serves only teams and ownedaccesskeys, in API group "management.service"' } });
  });

  it('refuses malformed bodies with a 400 Status, and reads of a review with 405', async () => {
    const garbage = await post(`${authz()}/selfsubjectaccessreviews`, 'k8s\u0000\u00ff\u00ff', 'application/vnd.kubernetes.protobuf');
    expect(garbage.status).toBe(400);
    expect(await garbage.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: 'the request body is not a valid Kubernetes protobuf message' });
    const empty = await post(`${authz()}/selfsubjectaccessreviews`, JSON.stringify({ kind: 'SelfSubjectAccessReview', spec: {} }));
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { message: string }).message).toBe('spec.resourceAttributes or spec.nonResourceAttributes is required');
    const wrongKind = await post(`${authz()}/selfsubjectrulesreviews`, JSON.stringify({ kind: 'Team' }));
    expect(wrongKind.status).toBe(400);
    const read = await server.fetch(`${authz()}/selfsubjectrulesreviews`);
    expect(read.status).toBe(405);
    const anonymous = await fetch(`${authz()}/selfsubjectrulesreviews`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);
  });

  it('answers for paths outside the resource API as those endpoints decide: /metrics for a viewer, POST /sync only for a management admin', async () => {
    const api = `${server.base}/kubernetes/management/apis/management.service/v1`;
    const json = { 'Content-Type': 'application/json' };
    await server.fetch(`${api}/teams`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'viewers' }, spec: { users: ['vic'], clusterRoles: [{ name: 'teams-viewer' }] } }) });
    const viewerKey = `Viewer${'v'.repeat(40)}`;
    const made = await server.fetch(`${api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'vic-key' }, spec: { user: 'vic', key: viewerKey } }) });
    expect(made.status).toBe(201);
    const as = { ...json, Authorization: `Bearer ${viewerKey}` };
    const can = async (verb: string, path: string) => {
      const review = { kind: 'SelfSubjectAccessReview', spec: { nonResourceAttributes: { verb, path } } };
      const res = await server.fetch(`${authz()}/selfsubjectaccessreviews`, { method: 'POST', headers: as, body: JSON.stringify(review) });
      return ((await res.json()) as { status: { allowed: boolean } }).status.allowed;
    };
    expect(await can('get', '/metrics')).toBe(true);
    expect((await server.fetch(`${server.base}/metrics`, { headers: as })).status).toBe(200);
    expect(await can('post', '/sync')).toBe(false);
    expect(await can('get', '/apis/management.service/v1')).toBe(true);
    expect(await can('get', '/nothing')).toBe(false);
    const rules = await server.fetch(`${authz()}/selfsubjectrulesreviews`, { method: 'POST', headers: as, body: JSON.stringify({ kind: 'SelfSubjectRulesReview', spec: {} }) });
    const urls = ((await rules.json()) as { status: { nonResourceRules: { nonResourceURLs: string[] }[] } }).status.nonResourceRules.flatMap((r) => r.nonResourceURLs);
    expect(urls).toContain('/metrics');
    expect(urls).toContain('/version');
    expect(urls).not.toContain('/sync');
  });
});
