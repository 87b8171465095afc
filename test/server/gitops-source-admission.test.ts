/**
 * The `gitops-source` admission plugin: naming a GitOps source on an object hands it to that
 * source's `apply --prune`, which deletes it once git no longer holds it, so it needs delete on
 * the object. Found by a review: a user who could update a team, but not delete it, could name a
 * source on it and have the next pruning apply delete the team and its keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const merge = { 'Content-Type': 'application/merge-patch+json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;
const source = 'gitops.management.service/source';

describe('naming a GitOps source on an object', () => {
  let server: InProcess;
  const patch = (path: string, annotations: Record<string, string | null>, who?: string) =>
    server.fetch(`${server.api}/${path}`, { method: 'PATCH', headers: { ...merge, ...(who ? { Authorization: `Bearer ${keyOf(who)}` } : {}) }, body: JSON.stringify({ metadata: { annotations } }) });

  beforeAll(async () => {
    server = await startInProcess({});
    for (const [path, body] of [
      ['ownedaccesskeys', { metadata: { name: 'ed-key' }, spec: { user: 'ed', key: keyOf('ed') } }],
      // ed may update payments (an access rule), not delete it.
      ['teams', { metadata: { name: 'payments' }, spec: { access: [{ verbs: ['get', 'update', 'patch'], users: ['ed'] }] } }],
    ] as const)
      expect((await server.fetch(`${server.api}/${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) })).status).toBe(201);
  });
  afterAll(() => server.close());

  it('needs delete on it: an updater who may not delete is refused 403, saying why, and the object is left as it was', async () => {
    const refused = await patch('teams/payments', { [source]: 'platform-teams' }, 'ed');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toContain(
      'setting the gitops.management.service/source annotation hands this object to a GitOps source, whose apply --prune deletes it once git no longer holds it: that needs delete on it',
    );
    const team = (await (await server.fetch(`${server.api}/teams/payments`)).json()) as { metadata: { annotations?: Record<string, string> } };
    expect(team.metadata.annotations?.[source]).toBeUndefined();
    // Other annotations are the updater's to write.
    expect((await patch('teams/payments', { note: 'on call: ed' }, 'ed')).status).toBe(200);
  });

  it('one who may delete it names, changes and removes it; an updater may remove it, and may not change it', async () => {
    expect((await patch('teams/payments', { [source]: 'platform-teams' })).status).toBe(200);
    expect((await patch('teams/payments', { [source]: 'other-source' }, 'ed')).status).toBe(403);
    expect((await patch('teams/payments', { note: 'still ed' }, 'ed')).status).toBe(200);
    expect((await patch('teams/payments', { [source]: null }, 'ed')).status).toBe(200);
    // A user names a source on a key of their own, which they may delete.
    expect((await patch('ownedaccesskeys/ed-key', { [source]: 'ed-keys' }, 'ed')).status).toBe(200);
  });
});
