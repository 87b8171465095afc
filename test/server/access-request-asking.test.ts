/**
 * Found by a review (stop 64): asking for access to a team one may not read told the asker, by the
 * wording of a break-glass refusal, whether the team allows break-glass at all. Asking names the
 * team, so whether it exists is answered, and what a request must fit (its maxDuration, its roles)
 * is told, as the asker needs it (docs/access-requests.md, "What asking tells"); whether the team
 * has break-glass users is told only to a caller who may read it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'e'.repeat(50)}`;

describe('what asking for access tells about a team', () => {
  let server: InProcess;
  const url = (p: string) => `${server.api}/${p}`;
  const ask = async (who: string, spec: Record<string, unknown>) => {
    const res = await fetch(url('accessrequests?dryRun=All'), { method: 'POST', headers: { ...json, Authorization: `Bearer ${keyOf(who)}` }, body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { name: 'probe' }, spec: { reason: 'x', ...spec } }) });
    return { status: res.status, message: ((await res.json()) as { message?: string }).message ?? '' };
  };

  beforeAll(async () => {
    server = await startInProcess();
    const make = async (p: string, body: unknown) => expect((await server.fetch(url(p), { method: 'POST', headers: json, body: JSON.stringify(body) })).status).toBe(201);
    // owen owns both teams (he reads them); eve reads neither.
    await make('teams', { metadata: { name: 'glass-ops' }, spec: { owner: { user: 'owen' }, clusterRoles: [{ name: 'teams-viewer' }], accessRequests: { maxDuration: '2h', breakGlass: { users: ['sam'] } } } });
    await make('teams', { metadata: { name: 'plain-ops' }, spec: { owner: { user: 'owen' }, clusterRoles: [{ name: 'teams-viewer' }], accessRequests: { maxDuration: '2h' } } });
    for (const who of ['eve', 'owen']) await make('ownedaccesskeys', { metadata: { name: who }, spec: { user: who, key: keyOf(who) } });
  });
  afterAll(() => server?.close());

  it('to a caller who may not read the team: break-glass is refused alike whether the team allows it', async () => {
    expect((await server.fetch(url('teams/glass-ops'), { headers: { Authorization: `Bearer ${keyOf('eve')}` } })).status).toBe(403);
    const withGlass = await ask('eve', { team: 'glass-ops', breakGlass: true });
    const without = await ask('eve', { team: 'plain-ops', breakGlass: true });
    expect(withGlass.status).toBe(403);
    expect({ status: without.status, message: without.message.replace('plain-ops', 'glass-ops') }).toEqual(withGlass);
    expect(withGlass.message).toContain('break-glass access to team "glass-ops" is only for the users its spec.accessRequests.breakGlass.users names');
    // What a request must fit is told: the asker needs it.
    expect((await ask('eve', { team: 'glass-ops', duration: '3h' })).message).toContain('(maxDuration 2h)');
    // Asking names the team: whether it exists is answered, as documented.
    expect((await ask('eve', { team: 'no-such-ops' })).message).toContain('no such team');
    expect((await ask('eve', { team: 'glass-ops', duration: '1h' })).status).toBe(201);
  });

  it('to a reader of the team, the refusals say why', async () => {
    expect((await ask('owen', { team: 'plain-ops', breakGlass: true })).message).toContain('team "plain-ops" does not allow break-glass requests');
    expect((await ask('owen', { team: 'glass-ops', duration: '3h' })).message).toContain('(maxDuration 2h)');
  });
});
