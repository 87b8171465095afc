/**
 * Found by the review of stop 64's value-setter change: the setter was the writing identity's user,
 * so a key someone else set could launder its setter by setting a value for its own user (a
 * rotation with itself, a key made with it: recorded `user:dan`, carrying dan's approvals). The
 * writing key's own setter is now passed on (auth/identity.ts valueSetterOf).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { as, bearer, json, keyOf, setBy, valueSetterHarness } from './value-setter-harness.js';
import { mintFederatedKey } from '../../src/federation/mint.js';
import type { FederatedCredential } from '../../src/api/types.js';


describe('laundering the value setter through the key itself', () => {
  let server: InProcess;
  const { url, post, made, setterOf: annotation, onCall } = valueSetterHarness(() => server);
  const readsProd = async (value: string) => (await server.fetch(url('teams/prod-admins'), { headers: bearer(value) })).status;

  let byKeymaster = '';
  let bySam = '';

  beforeAll(async () => {
    server = await startInProcess();
    await made('teams', { metadata: { name: 'keyadmins' }, spec: { users: ['keymaster'], clusterRoles: [{ name: 'accesskeys-admin' }, { name: 'teams-viewer' }] } });
    await made('teams', { metadata: { name: 'support' }, spec: { users: ['sam'], clusterRoles: [{ name: 'impersonator' }, { name: 'accesskeys-admin' }, { name: 'teams-viewer' }] } });
    await made('teams', { metadata: { name: 'prod-admins' }, spec: { owner: { user: 'admin' }, clusterRoles: [{ name: 'management-admin' }], accessRequests: { maxDuration: '4h' } } });
    for (const who of ['dan', 'keymaster', 'sam']) await made('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
    // Before dan goes on call: keymaster makes dan a key (and holds its value); sam, acting as dan, makes one too.
    byKeymaster = (await made('ownedaccesskeys', { metadata: { name: 'dan-by-keymaster' }, spec: { user: 'dan' } }, as('keymaster'))).spec!.key!;
    bySam = (await made('ownedaccesskeys', { metadata: { name: 'dan-by-sam' }, spec: { user: 'dan' } }, { ...as('sam'), 'Impersonate-User': 'dan' })).spec!.key!;
    expect(await annotation('dan-by-keymaster')).toBe('user:keymaster');
    expect(await annotation('dan-by-sam')).toBe('impersonator:sam');
    // dan goes on call.
    await onCall('dan');
  });
  afterAll(() => server.close());

  it("dan's own key carries the approval; the keys keymaster and sam set do not", async () => {
    expect(await readsProd(keyOf('dan'))).toBe(200);
    expect(await readsProd(byKeymaster)).toBe(403);
    expect(await readsProd(bySam)).toBe(403);
  });

  it('keymaster rotating the key it holds with that key itself stays its setter: the new value carries nothing', async () => {
    const rotated = await post('ownedaccesskeys/dan-by-keymaster/rotation', { apiVersion: 'management.service/v1', kind: 'KeyRotation', spec: { overlapSeconds: 0 } }, bearer(byKeymaster));
    expect(rotated.status, rotated.body.message).toBe(201);
    const fresh = rotated.body.spec!.key!;
    expect(await annotation('dan-by-keymaster')).toBe('indirect:dan via user:keymaster');
    // The value only keymaster holds now acts with dan's management-admin approval.
    expect(await readsProd(fresh)).toBe(403);
  });

  it('a key of dan made with the key sam made while impersonating dan passes sam on: it carries nothing', async () => {
    const second = await made('ownedaccesskeys', { metadata: { name: 'dan-second' }, spec: { user: 'dan', ttl: 3600 } }, bearer(bySam));
    expect(second.metadata!.annotations![setBy]).toBe('indirect:dan via impersonator:sam');
    expect(await readsProd(second.spec!.key!)).toBe(403);
  });

  it("a key of dan made by a key a CI job's minted key made is the job's: it carries nothing", async () => {
    const rule = await server.fetch(url('federatedcredentials'), {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'dan-ci' }, spec: { issuer: 'https://token.actions.githubusercontent.com', audiences: ['teamkeys'], claims: { repository_id: '7272' }, user: 'dan', ttl: 3600 } }),
    });
    expect(rule.status, await rule.clone().text()).toBe(201);
    const minted = (await mintFederatedKey(server.registry, (await rule.json()) as FederatedCredential, 'acme/app run 1', 3600, { username: 'job:acme/app run 1' })).key;
    expect(await readsProd(minted)).toBe(403);
    const hop1 = await made('ownedaccesskeys', { metadata: { name: 'hop1' }, spec: { user: 'dan', ttl: 3000 } }, bearer(minted));
    expect(hop1.metadata!.annotations![setBy]).toMatch(/^job:/);
    expect(await readsProd(hop1.spec!.key!)).toBe(403);
    // Shorter than hop1's: a key made by a key that expires must expire no later, and hop1's 3000 s
    // started a moment before (with the same ttl, a second's tick between the two made it a 403).
    const hop2 = await made('ownedaccesskeys', { metadata: { name: 'hop2' }, spec: { user: 'dan', ttl: 2000 } }, bearer(hop1.spec!.key!));
    expect(hop2.metadata!.annotations![setBy]).toMatch(/^indirect:dan via job:/);
    expect(await readsProd(hop2.spec!.key!)).toBe(403);
  });
});
