/**
 * Found by a fourth review of the value-setter mechanism (docs/access-requests.md, "Temporary
 * access rides only on keys the user or an administrator set"): a value someone other than dan
 * knew could carry dan's (or keymaster's) later grants: a rotation's previous value (the setter is
 * the new value's), a setter passed on bare (`user:keymaster` on a key kate knew), and the same
 * value written again taking a new setter. Each now carries nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { as, bearer, json, keyOf, valueSetterHarness } from './value-setter-harness.js';


describe('values someone other than the user knows carry none of its grants', () => {
  let server: InProcess;
  const { url, send, post, made, read, setterOf, onCall } = valueSetterHarness(() => server);
  // What management-admin (the grant) allows and teams-viewer (the key admins' standing role) does not: a write.
  const readsProd = async (value: string) => (await server.fetch(url('teams/prod-admins'), { method: 'PATCH', headers: { ...bearer(value), 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { labels: { probed: 'yes' } } }) })).status;

  beforeAll(async () => {
    server = await startInProcess();
    // Two accesskeys-admins (keymaster, kate), and dan, an ordinary user.
    await made('teams', { metadata: { name: 'keyadmins' }, spec: { users: ['keymaster', 'kate'], clusterRoles: [{ name: 'accesskeys-admin' }, { name: 'teams-viewer' }] } });
    await made('teams', { metadata: { name: 'prod-admins' }, spec: { owner: { user: 'admin' }, clusterRoles: [{ name: 'management-admin' }], accessRequests: { maxDuration: '4h' } } });
    for (const who of ['dan', 'keymaster', 'kate']) await made('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
    expect(await setterOf('dan-key')).toBe('admin:admin');
  });
  afterAll(() => server.close());

  it("a key's previous value (held by keymaster) carries none of dan's grants once dan rotates it (awaitConfirmation / overlap)", async () => {
    // keymaster makes dan a key before dan goes on call, and holds its value.
    const v1 = (await made('ownedaccesskeys', { metadata: { name: 'dan-by-keymaster' }, spec: { user: 'dan' } }, as('keymaster'))).spec!.key!;
    expect(await setterOf('dan-by-keymaster')).toBe('user:keymaster');
    // dan rotates it (as `teamkeys rotate` would), asking for the new value to be confirmed first.
    const rotated = await post('ownedaccesskeys/dan-by-keymaster/rotation', { apiVersion: 'management.service/v1', kind: 'KeyRotation', spec: { overlapSeconds: 3600, awaitConfirmation: true } }, as('dan'));
    expect(rotated.status, rotated.body.message).toBe(201);
    expect(await setterOf('dan-by-keymaster')).toBe('user:dan');
    await onCall('dan');
    // dan's new value carries the approval (correct) ...
    expect(await readsProd(rotated.body.spec!.key!)).toBe(200);
    // ... and so does keymaster's old value, which authenticates as the key until the rotation is
    // confirmed (and through the overlap after): grantsCarried judges the current value's setter.
    expect(await readsProd(v1)).toBe(403);
  });

  it('kate, using a key keymaster set for her, makes keymaster a key: recorded `indirect:kate via user:keymaster`, keymaster\'s later grants do not reach kate', async () => {
    const forKate = (await made('ownedaccesskeys', { metadata: { name: 'kate-by-keymaster' }, spec: { user: 'kate' } }, as('keymaster'))).spec!.key!;
    expect(await setterOf('kate-by-keymaster')).toBe('user:keymaster');
    // kate (an accesskeys-admin by standing rights) makes keymaster a key with it; she holds its value.
    const forKeymaster = (await made('ownedaccesskeys', { metadata: { name: 'keymaster-by-kate' }, spec: { user: 'keymaster' } }, bearer(forKate))).spec!.key!;
    // Made with kate's own key it would be `user:kate` and carry nothing; made with forKate it reads as keymaster's own.
    expect(await setterOf('keymaster-by-kate')).toBe('indirect:kate via user:keymaster');
    await onCall('keymaster');
    expect(await readsProd(keyOf('keymaster'))).toBe(200);
    expect(await readsProd(forKeymaster)).toBe(403);
  });

  it('a PUT that supplies the current value again (no new value) keeps the setter', async () => {
    await made('ownedaccesskeys', { metadata: { name: 'dora-key' }, spec: { user: 'dora', key: keyOf('dora') } });
    // keymaster makes dora a key with a value it chose (as a manifest with a key file would) and keeps it.
    const chosen = `Chosen${'q'.repeat(44)}`;
    await made('ownedaccesskeys', { metadata: { name: 'dora-chosen' }, spec: { user: 'dora', key: chosen } }, as('keymaster'));
    expect(await setterOf('dora-chosen')).toBe('user:keymaster');
    // dora applies the same manifest (its value unchanged) with her own key: nothing new is set.
    const current = await read('ownedaccesskeys/dora-chosen');
    const put = await send('PUT', 'ownedaccesskeys/dora-chosen', { ...current, spec: { ...(current.spec as object), key: chosen } }, as('dora'));
    expect(put.status, put.body.message).toBe(200);
    await onCall('dora');
    expect(await readsProd(keyOf('dora'))).toBe(200);
    // The value keymaster chose and still holds now reads as dora's own, and carries her approval.
    expect(await setterOf('dora-chosen')).toBe('user:keymaster');
    expect(await readsProd(chosen)).toBe(403);
  });

  // Found by a read of the final design: a move kept the setter, so a key an administrator set
  // (admin:), known to a keys admin, moved by them to eli while eli was not on call, carried eli's approvals.
  it('a key moved to another user takes its mover as setter: moved to eli by a keys admin, it carries none of his approvals', async () => {
    await made('ownedaccesskeys', { metadata: { name: 'eli-key' }, spec: { user: 'eli', key: keyOf('eli') } });
    const known = (await made('ownedaccesskeys', { metadata: { name: 'for-keymaster' }, spec: { user: 'keymaster' } })).spec!.key!;
    expect(await setterOf('for-keymaster')).toBe('admin:admin');
    const moved = await send('PATCH', 'ownedaccesskeys/for-keymaster', { spec: { user: 'eli' } }, { ...as('keymaster'), 'Content-Type': 'application/merge-patch+json' });
    expect(moved.status, moved.body.message).toBe(200);
    expect(await setterOf('for-keymaster')).toBe('user:keymaster');
    await onCall('eli');
    expect(await readsProd(keyOf('eli'))).toBe(200);
    expect(await readsProd(known)).toBe(403);
  });
});
