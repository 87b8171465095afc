/**
 * Kept from a review (stop 64), which found it holding: a FederatedCredential naming a team tells a
 * caller who may read no Team nothing of whether the team exists (the same 403 either way), as
 * test/auth/existence-leaks holds for an OwnedAccessKey's spec.team.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const eveKey = `EveKey${'e'.repeat(50)}`;

describe('FederatedCredential spec.team existence', () => {
  let server: InProcess;
  const url = (p: string) => `${server.api}/${p}`;
  const asEve = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(url(p), { method, headers: { ...json, Authorization: `Bearer ${eveKey}` }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json()) as { message?: string; reason?: string } };
  };
  beforeAll(async () => {
    server = await startInProcess();
    const make = async (p: string, body: unknown) => expect((await server.fetch(url(p), { method: 'POST', headers: json, body: JSON.stringify(body) })).status).toBe(201);
    await make('teams', { metadata: { name: 'secret-ops' }, spec: { users: ['sam'] } });
    await make('ownedaccesskeys', { metadata: { name: 'eve' }, spec: { user: 'eve', key: eveKey } });
  });
  afterAll(() => server?.close());

  it('same answer whether the team exists or not', async () => {
    const rule = (team: string) => ({
      apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'probe' },
      spec: { issuer: 'https://token.actions.githubusercontent.com', audiences: ['teamkeys'], claims: { repository_id: '1', repository_owner_id: '2' }, team },
    });
    const shape = (r: { status: number; body: { message?: string; reason?: string } }, name: string) => ({ status: r.status, reason: r.body.reason, message: (r.body.message ?? '').replaceAll(name, '<n>') });
    const existing = await asEve('POST', 'federatedcredentials?dryRun=All', rule('secret-ops'));
    const missing = await asEve('POST', 'federatedcredentials?dryRun=All', rule('no-such-team'));
    expect(shape(missing, 'no-such-team')).toEqual(shape(existing, 'secret-ops'));
  });
});
