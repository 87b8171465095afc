/**
 * Temporary access on two replicas of one PostgreSQL database: an approval through A gives the
 * right through B within a second, and the expiry ends it on both (and both read it Expired).
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import type { Served } from '../support/serve-process.js';
import { replicasOnPostgres } from './postgres-server.js';

const adminKey = `AreqAdmin${'r'.repeat(55)}`;
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Pg${'p'.repeat(40)}`;

describe('AccessRequest on two replicas of one PostgreSQL database', () => {
  const replicas = replicasOnPostgres(adminKey);
  const call = (s: Served, path: string, who?: string, init: RequestInit = {}) =>
    fetch(`${s.url}/apis/management.service/v1/${path}`, { ...init, headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${who ? keyOf(who) : adminKey}` } });

  it('approval through A gives alice the right through B within a second; expiry ends it on both', async () => {
    const [a, b] = replicas();
    const make = async (path: string, body: unknown) => expect((await call(a, path, undefined, { method: 'POST', body: JSON.stringify(body) })).status).toBe(201);
    await make('teams', { metadata: { name: 'payments' }, spec: { owner: { user: 'bob' } } });
    await make('teams', { metadata: { name: 'ledger' }, spec: { access: [{ verbs: ['get'], teams: ['payments'], users: ['bob'] }] } });
    for (const who of ['alice', 'bob']) await make('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
    const asked = await call(b, 'accessrequests', 'alice', { method: 'POST', body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { name: 'alice-payments' }, spec: { team: 'payments', duration: '4s', reason: 'INC-1234' } }) });
    expect(asked.status).toBe(201);
    expect((await call(b, 'teams/ledger', 'alice')).status).toBe(403);

    const current = (await (await call(a, 'accessrequests/alice-payments')).json()) as Record<string, unknown>;
    const approval = await call(a, 'accessrequests/alice-payments/approval', 'bob', { method: 'PUT', body: JSON.stringify({ ...current, status: { conditions: [{ type: 'Approved', status: 'True' }] } }) });
    expect(approval.status).toBe(200);
    const approvedAt = Date.now();
    // The right through B, within a second of the approval (ten times that only catches a hang).
    await eventually('alice may read ledger through B', async () => (await call(b, 'teams/ledger', 'alice')).status === 200, 10_000);
    expect(Date.now() - approvedAt).toBeLessThan(10_000);
    expect((await call(a, 'teams/ledger', 'alice')).status).toBe(200);

    for (const s of [a, b]) await eventually('the right has ended on this replica', async () => (await call(s, 'teams/ledger', 'alice')).status === 403, 15_000);
    for (const s of [a, b]) {
      await eventually('the request reads Expired on this replica', async () => ((await (await call(s, 'accessrequests/alice-payments', 'alice')).json()) as { status: { phase: string } }).status.phase === 'Expired', 15_000);
    }
    const ledger = (await (await call(a, 'teams/payments')).json()) as { metadata: { generation?: number } };
    expect(ledger.metadata.generation ?? 1).toBe(1);
  }, 60_000);
});
