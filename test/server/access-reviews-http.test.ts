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
});
