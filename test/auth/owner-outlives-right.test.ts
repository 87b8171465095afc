/**
 * Issue 24 review: an owner reference is checked when it is written, and now also when it acts. A
 * key that may delete a team ties the team to a key of its own and loses its right on the team:
 * deleting that key would let the collector remove the team (its every owner gone), so the delete
 * is refused (403) unless the caller may delete everything it takes with it (kube does not check
 * this; the widened invariant does). Orphan deletion, which keeps the team, is allowed. A caller
 * who still may delete the team, and a team's owner deleting the team with its keys, are not
 * hindered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from '../server/serve-process.js';
import { eventually } from '../support/eventually.js';
import { apiCaller } from './api-call.js';

const merge = 'application/merge-patch+json';
const alice = `Outlive${'a'.repeat(40)}`;
const olga = `Outlive${'o'.repeat(40)}`;

describe('issue 24 review: an owner reference outlives the right that wrote it', () => {
  let served: Served;
  const call = apiCaller<{ metadata?: { uid?: string }; message?: string }>(() => served);
  const admin = (method: string, path: string, body?: unknown, type?: string) => call(method, path, served.adminKey, body, type);
  const gone = (path: string) => eventually(`${path} is gone`, async () => (await admin('GET', path)).status === 404, 10_000);
  const cleansUp = { users: ['v'], access: [{ name: 'alice-cleans-up', verbs: ['get', 'patch', 'delete'], users: ['alice'] }] };

  /** Alice makes a key of her own and ties `team` to it (she may delete the team, so she may). */
  const tie = async (team: string, key: string) => {
    const own = await call('POST', '/ownedaccesskeys', alice, { metadata: { name: key }, spec: { user: 'alice' } });
    expect(own.status).toBe(201);
    const ref = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', name: key, uid: own.body.metadata!.uid! };
    expect((await call('PATCH', `/teams/${team}`, alice, { metadata: { ownerReferences: [ref] } }, merge)).status).toBe(200);
  };

  beforeAll(async () => {
    served = await startServe(['--insecure-http']);
    const reads = { access: [{ name: 'alice-reads', verbs: ['get'], users: ['alice'] }] };
    expect((await admin('POST', '/teams', { metadata: { name: 'vault3' }, spec: reads })).status).toBe(201);
    for (const name of ['vault', 'vault2']) expect((await admin('POST', '/teams', { metadata: { name }, spec: cleansUp })).status).toBe(201);
    expect((await admin('POST', '/teams', { metadata: { name: 'crew' }, spec: { owner: { user: 'olga' } } })).status).toBe(201);
    expect((await admin('POST', '/ownedaccesskeys', { metadata: { name: 'alice' }, spec: { user: 'alice', key: alice } })).status).toBe(201);
    expect((await admin('POST', '/ownedaccesskeys', { metadata: { name: 'olga' }, spec: { user: 'olga', key: olga } })).status).toBe(201);
  }, 60_000);
  afterAll(() => served?.stop());

  it('a key that lost delete on a team cannot delete it through a key of its own it tied the team to', async () => {
    await tie('vault', 'alice-switch');
    // Her right is taken away; the reference stays.
    expect((await admin('PATCH', '/teams/vault', { spec: { access: null } }, merge)).status).toBe(200);
    expect((await call('DELETE', '/teams/vault', alice)).status).toBe(403);
    // Deleting her key would take vault with it: refused, without naming vault (she may not read it).
    const refused = await call('DELETE', '/ownedaccesskeys/alice-switch', alice);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('deleting ownedaccesskeys "alice-switch" would garbage-collect objects you may not delete');
    expect(refused.body.message).not.toContain('vault');
    expect((await admin('GET', '/ownedaccesskeys/alice-switch')).status).toBe(200);
    // Orphan deletion keeps the dependents: her key goes, vault stays.
    expect((await call('DELETE', '/ownedaccesskeys/alice-switch?propagationPolicy=Orphan', alice)).status).toBe(200);
    await gone('/ownedaccesskeys/alice-switch');
    await new Promise((r) => setTimeout(r, 1500)); // a collector pass or more
    expect((await admin('GET', '/teams/vault')).status).toBe(200);
  });

  it('a key that still may delete the team deletes it through its key, and a team owner deletes a team with its keys', async () => {
    await tie('vault2', 'alice-switch2');
    expect((await call('DELETE', '/ownedaccesskeys/alice-switch2', alice)).status).toBe(200);
    await gone('/teams/vault2');
    // The server-set binding of a team key is the point of the feature: the team's keys go with it.
    expect((await call('POST', '/ownedaccesskeys', olga, { metadata: { name: 'crew-ci' }, spec: { team: 'crew' } })).status).toBe(201);
    expect((await call('DELETE', '/teams/crew', olga)).status).toBe(200);
    await gone('/ownedaccesskeys/crew-ci');
  });

  it('the refusal names a dependent the caller may read', async () => {
    const own = await call('POST', '/ownedaccesskeys', alice, { metadata: { name: 'alice-switch3' }, spec: { user: 'alice' } });
    const ref = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', name: 'alice-switch3', uid: own.body.metadata!.uid! };
    // An admin ties vault3 (which alice may only read) to alice's key.
    expect((await admin('PATCH', '/teams/vault3', { metadata: { ownerReferences: [ref] } }, merge)).status).toBe(200);
    const refused = await call('DELETE', '/ownedaccesskeys/alice-switch3', alice);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('would garbage-collect objects you may not delete (teams "vault3")');
  });
});
