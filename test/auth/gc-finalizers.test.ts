/**
 * Issue 24 review, "a write whose effect comes later": the finalizers the garbage collector works
 * through (`orphan`, `foregroundDeletion`) decide what a deletion does to the owner's dependents.
 * Taking `orphan` off a team deleted with propagationPolicy=Orphan makes the collector delete the
 * dependents the deleter meant to keep; taking `foregroundDeletion` off lets the owner go before
 * the dependents that block it. A key that may patch the team but not delete it may do neither.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from '../server/serve-process.js';
import { apiCaller, type Reply as ApiReply } from './api-call.js';

const merge = 'application/merge-patch+json';
const value = (name: string) => `Fin${name.replace(/[^A-Za-z0-9]/g, '')}${'f'.repeat(40)}`;

type Reply = ApiReply<{ message?: string; metadata?: { uid?: string; finalizers?: string[] } }>;

describe('issue 24 review: the collector\'s finalizers are a delete, not a patch', () => {
  let served: Served;
  const call = apiCaller<Reply['body']>(() => served);
  const admin = (method: string, path: string, body?: unknown, type?: string) => call(method, path, served.adminKey, body, type);

  beforeAll(async () => {
    served = await startServe(['--insecure-http']);
    const spec = { access: [{ name: 'mal-edits', verbs: ['get', 'patch', 'update'], users: ['mal'] }] };
    for (const name of ['payments', 'billing']) expect((await admin('POST', '/teams', { metadata: { name }, spec })).status).toBe(201);
    expect((await admin('POST', '/ownedaccesskeys', { metadata: { name: 'mal' }, spec: { user: 'mal', key: value('mal') } })).status).toBe(201);
  }, 60_000);
  afterAll(() => served?.stop());

  it.each(['orphan', 'foregroundDeletion'])('taking %s off a team needs delete on it: 403, and the finalizer stays', async (finalizer) => {
    const team = finalizer === 'orphan' ? 'payments' : 'billing';
    expect((await admin('PATCH', `/teams/${team}`, { metadata: { finalizers: [finalizer, 'example.com/hold'] } }, merge)).status).toBe(200);
    const res = await call('PATCH', `/teams/${team}`, value('mal'), { metadata: { finalizers: ['example.com/hold'] } }, merge);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain(`removing the ${finalizer} finalizer requires permission to delete this object`);
    expect((await admin('GET', `/teams/${team}`)).body.metadata?.finalizers).toEqual([finalizer, 'example.com/hold']);
    // Other finalizers stay a patch, as in kube: taking one off only lets a deletion someone asked for finish.
    expect((await call('PATCH', `/teams/${team}`, value('mal'), { metadata: { finalizers: [finalizer] } }, merge)).status).toBe(200);
  });
});
