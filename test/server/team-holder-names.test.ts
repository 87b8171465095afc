/**
 * A team's keys are named as a holder `team:<name>` (auth/identity.ts subjectOf). A key for a user,
 * or a subject, named `team:payments` was in the holder index under the very value of team
 * payments' keys: its keys counted against the team's quota (a key admin or an unprefixed sign-in
 * could fill it) and were looked up among the team's. Such names are now refused where they are
 * new, on keys and on FederatedCredentials; a key stored with one before keeps it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredObject } from '../../src/store/types.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

describe('users and subjects named like a team key holder', () => {
  let server: InProcess;
  beforeAll(async () => {
    server = await startInProcess();
  });
  afterAll(() => server.close());

  const post = (plural: string, body: unknown) => server.fetch(`${server.api}/${plural}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const causes = async (res: Response) => ({ status: res.status, causes: ((await res.json()) as { details?: { causes?: { field: string; message: string }[] } }).details?.causes });
  const detail = 'may not begin with "team:": that is how the keys of a team are named as their holder; set spec.team for a team\'s key';

  it('a key for user or subject team:<name> is 422 at that field', async () => {
    for (const field of ['user', 'subject']) {
      const res = await post('ownedaccesskeys', { metadata: { name: `as-${field}` }, spec: { [field]: 'team:payments' } });
      expect(await causes(res)).toEqual({ status: 422, causes: [{ reason: 'FieldValueInvalid', field: `spec.${field}`, message: `Invalid value: "team:payments": ${detail}` }] });
    }
    // The team's own key, and a user whose name only contains the word, are keys as before.
    expect((await post('teams', { metadata: { name: 'payments' }, spec: {} })).status).toBe(201);
    expect((await post('ownedaccesskeys', { metadata: { name: 'team-key' }, spec: { team: 'payments' } })).status).toBe(201);
    expect((await post('ownedaccesskeys', { metadata: { name: 'user-key' }, spec: { user: 'my-team:payments' } })).status).toBe(201);
  });

  it('a FederatedCredential for user team:<name> is 422 at spec.user', async () => {
    const res = await post('federatedcredentials', { metadata: { name: 'as-team' }, spec: { issuer: 'https://token.actions.githubusercontent.com', audiences: ['teamkeys'], claims: { repository: 'acme/app' }, user: 'team:payments' } });
    expect(await causes(res)).toMatchObject({ status: 422, causes: [{ field: 'spec.user', message: `Invalid value: "team:payments": ${detail}` }] });
  });

  it('a key stored with such a name before can still be written, but not renamed to one', async () => {
    const store = server.registry.ownedaccesskeys.ctx.store;
    await store.create('/ownedaccesskeys/old-odd', { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'old-odd', uid: 'uid-old-odd', creationTimestamp: '2026-11-01T00:00:00Z' }, spec: { user: 'team:legacy', key: `Old${'o'.repeat(45)}` } } as unknown as StoredObject);
    const patch = (name: string, body: unknown) => server.fetch(`${server.api}/ownedaccesskeys/${name}`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify(body) });
    expect((await patch('old-odd', { spec: { description: 'kept' } })).status).toBe(200);
    expect(await causes(await patch('user-key', { spec: { user: 'team:payments' } }))).toMatchObject({ status: 422, causes: [{ field: 'spec.user' }] });
  });
});
