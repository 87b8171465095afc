/**
 * Issue 24 review, "a refusal reveals what the caller cannot read": a key that may read no Team
 * learns nothing about which teams (or keys) exist, or which are being deleted, from the answers to
 * its writes. GET already answers 403 whether the object exists or not; these are the write paths.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from '../server/serve-process.js';
import { apiCaller, type Reply as ApiReply } from './api-call.js';

const merge = 'application/merge-patch+json';
const value = (name: string) => `Leak${name.replace(/[^A-Za-z0-9]/g, '')}${'l'.repeat(40)}`;

type Reply = ApiReply<{ message?: string; reason?: string }>;

describe('issue 24 review: writes do not tell a caller which objects exist', () => {
  let served: Served;
  const call = apiCaller<Reply['body']>(() => served);
  const admin = (method: string, path: string, body?: unknown, type?: string) => call(method, path, served.adminKey, body, type);
  /** The answer with the object's name taken out: what a caller can tell two answers apart by. */
  const shape = (r: Reply, ...names: string[]) => ({ status: r.status, reason: r.body.reason, message: names.reduce((m, n) => m.replaceAll(n, '<name>'), r.body.message ?? '') });

  beforeAll(async () => {
    served = await startServe(['--insecure-http']);
    expect((await admin('POST', '/teams', { metadata: { name: 'secret' }, spec: { users: ['sam'] } })).status).toBe(201);
    expect((await admin('POST', '/teams', { metadata: { name: 'leaving', finalizers: ['example.com/hold'] }, spec: { users: ['lea'] } })).status).toBe(201);
    expect((await admin('DELETE', '/teams/leaving')).status).toBe(200);
    for (const user of ['nobody', 'sam']) {
      expect((await admin('POST', '/ownedaccesskeys', { metadata: { name: user }, spec: { user, key: value(user) } })).status).toBe(201);
    }
  }, 60_000);
  afterAll(() => served?.stop());

  it.each([
    ['DELETE', undefined, undefined],
    ['PATCH', { spec: { description: 'x' } }, merge],
    ['PUT', { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: '<name>', resourceVersion: '1' }, spec: {} }, 'application/json'],
  ])('%s of a team the caller may not read: the same 403 whether it exists or not', async (method, body, type) => {
    const nobody = value('nobody');
    const to = (name: string) => (body ? JSON.parse(JSON.stringify(body).replaceAll('<name>', name)) : undefined);
    const existing = await call(method, '/teams/secret', nobody, to('secret'), type);
    const missing = await call(method, '/teams/no-such-team', nobody, to('no-such-team'), type);
    expect(existing.status).toBe(403);
    expect(shape(missing, 'no-such-team')).toEqual(shape(existing, 'secret'));
  });

  it('a failed precondition tells a caller who may not delete the object neither its uid nor its resourceVersion', async () => {
    const uid = (await admin('GET', '/teams/secret')).body as { metadata?: { uid?: string; resourceVersion?: string } };
    for (const preconditions of [{ uid: 'guess' }, { resourceVersion: '1' }]) {
      const res = await call('DELETE', '/teams/secret', value('nobody'), { kind: 'DeleteOptions', apiVersion: 'v1', preconditions });
      expect(res.status).toBe(403);
      expect(res.body.message).not.toContain(uid.metadata!.uid!);
      expect(res.body.message).not.toContain('Precondition');
    }
    // The administrator is told, as kube-apiserver tells it.
    const told = await admin('DELETE', '/teams/secret', { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'guess' } });
    expect(told.status).toBe(409);
    expect(told.body.message).toContain(`UID in object meta: ${uid.metadata!.uid!}`);
  });

  it('DELETE of an access key the caller may not read: the same 403 whether it exists or not', async () => {
    const nobody = value('nobody');
    const existing = await call('DELETE', '/ownedaccesskeys/sam', nobody);
    const missing = await call('DELETE', '/ownedaccesskeys/no-such-key', nobody);
    expect(existing.status).toBe(403);
    expect(shape(missing, 'no-such-key')).toEqual(shape(existing, 'sam'));
    // A caller who may see every key still hears 404.
    expect((await admin('DELETE', '/ownedaccesskeys/no-such-key')).status).toBe(404);
  });

  it('a key naming a team in spec.team: the same 403 whether the team exists, is being deleted, or not', async () => {
    const nobody = value('nobody');
    const keyFor = (team: string) => call('POST', '/ownedaccesskeys?dryRun=All', nobody, { metadata: { name: 'probe' }, spec: { team } });
    const existing = await keyFor('secret');
    const leaving = await keyFor('leaving');
    const missing = await keyFor('no-such-team');
    expect(existing.status).toBe(403);
    expect(shape(leaving, 'leaving')).toEqual(shape(existing, 'secret'));
    expect(shape(missing, 'no-such-team')).toEqual(shape(existing, 'secret'));
    // Moving her own key to a team is judged the same way.
    const move = (team: string) => call('PATCH', '/ownedaccesskeys/nobody?dryRun=All', nobody, { spec: { user: null, team } }, merge);
    const movedExisting = await move('secret');
    expect(movedExisting.status).toBe(403);
    expect(shape(await move('leaving'), 'leaving')).toEqual(shape(movedExisting, 'secret'));
    expect(shape(await move('no-such-team'), 'no-such-team')).toEqual(shape(movedExisting, 'secret'));
    // The administrator, who may read every team, is still told why.
    const told = await call('POST', '/ownedaccesskeys?dryRun=All', served.adminKey, { metadata: { name: 'probe' }, spec: { team: 'no-such-team' } });
    expect(told.status).toBe(422);
    expect(told.body.message).toContain('team "no-such-team" does not exist');
  });
});
