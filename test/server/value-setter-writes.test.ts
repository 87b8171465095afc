/**
 * Kept from a fourth review of the value-setter mechanism, which found these holding (and the
 * size budget's exemption too wide: bounded now): server-side apply records the writer; no client
 * write removes the annotation; a JSON patch of spec.key records the writer (passing on who set its
 * key); a confirm and a dry run change nothing; an impersonating administrator is recorded as one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { as, bearer, json, keyOf, setBy, valueSetterHarness } from './value-setter-harness.js';


describe('the value setter on every write path', () => {
  let server: InProcess;
  const { send, made, read, setterOf } = valueSetterHarness(() => server);

  beforeAll(async () => {
    server = await startInProcess();
    await made('teams', { metadata: { name: 'keyadmins' }, spec: { users: ['keymaster'], clusterRoles: [{ name: 'accesskeys-admin' }, { name: 'teams-viewer' }] } });
    await made('teams', { metadata: { name: 'ops' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } });
    for (const who of ['dan', 'keymaster']) await made('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
  });
  afterAll(() => server.close());

  it('server-side apply creating a key records the writer', async () => {
    const r = await send('PATCH', 'ownedaccesskeys/ssa-dan?fieldManager=x', { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'ssa-dan', annotations: { [setBy]: 'user:dan' } }, spec: { user: 'dan' } }, { ...as('keymaster'), 'Content-Type': 'application/apply-patch+yaml' });
    expect(r.status, r.body.message).toBe(201);
    expect(await setterOf('ssa-dan')).toBe('user:keymaster');
  });

  it('a JSON patch removing the annotation, a merge patch nulling it, a PUT without it: kept', async () => {
    const rm = await send('PATCH', 'ownedaccesskeys/ssa-dan', [{ op: 'remove', path: `/metadata/annotations/${setBy.replace('/', '~1')}` }], { ...as('keymaster'), 'Content-Type': 'application/json-patch+json' });
    expect([200, 403, 422]).toContain(rm.status);
    expect(await setterOf('ssa-dan')).toBe('user:keymaster');
    const nul = await send('PATCH', 'ownedaccesskeys/ssa-dan', { metadata: { annotations: { [setBy]: null } } }, { ...as('dan'), 'Content-Type': 'application/merge-patch+json' });
    expect([200, 403, 422]).toContain(nul.status);
    expect(await setterOf('ssa-dan')).toBe('user:keymaster');
    const cur = await read('ownedaccesskeys/ssa-dan');
    const put = await send('PUT', 'ownedaccesskeys/ssa-dan', { ...cur, metadata: { ...cur.metadata, annotations: {} } }, as('dan'));
    expect([200, 403, 422]).toContain(put.status);
    expect(await setterOf('ssa-dan')).toBe('user:keymaster');
    // status subresource too
    const st = await send('PATCH', 'ownedaccesskeys/ssa-dan/status', { metadata: { annotations: { [setBy]: 'user:dan' } } }, { ...json, 'Content-Type': 'application/merge-patch+json' });
    expect([200, 403, 422]).toContain(st.status);
    expect(await setterOf('ssa-dan')).toBe('user:keymaster');
  });

  it('a JSON patch that replaces spec.key records the writer, with who set the key it wrote with (keymaster may know the value)', async () => {
    const byKm = (await made('ownedaccesskeys', { metadata: { name: 'dan-km' }, spec: { user: 'dan' } }, as('keymaster'))).spec!.key!;
    const r = await send('PATCH', 'ownedaccesskeys/dan-km', [{ op: 'add', path: '/spec/key', value: `Fresh${'z'.repeat(45)}` }], { ...bearer(byKm), 'Content-Type': 'application/json-patch+json' });
    expect(r.status, r.body.message).toBe(200);
    expect(await setterOf('dan-km')).toBe('indirect:dan via user:keymaster');
  });

  it('rotation confirm and dry runs change nothing', async () => {
    const rot = await send('POST', 'ownedaccesskeys/ssa-dan/rotation', { apiVersion: 'management.service/v1', kind: 'KeyRotation', spec: { overlapSeconds: 60, awaitConfirmation: true } }, as('keymaster'));
    expect(rot.status, rot.body.message).toBe(201);
    const conf = await send('POST', 'ownedaccesskeys/ssa-dan/rotation', { apiVersion: 'management.service/v1', kind: 'KeyRotation', spec: { confirm: true } }, as('dan'));
    expect(conf.status, conf.body.message).toBe(200);
    expect(await setterOf('ssa-dan')).toBe('user:keymaster');
    const dry = await send('POST', 'ownedaccesskeys/ssa-dan/rotation?dryRun=All', { apiVersion: 'management.service/v1', kind: 'KeyRotation', spec: { overlapSeconds: 0 } }, as('dan'));
    expect(dry.status, dry.body.message).toBe(201);
    expect(dry.body.metadata?.annotations?.[setBy]).toBe('user:dan');
    expect(await setterOf('ssa-dan')).toBe('user:keymaster');
  });

  it('an impersonating administrator records impersonator:', async () => {
    const r = await made('ownedaccesskeys', { metadata: { name: 'dan-imp' }, spec: { user: 'dan' } }, { ...json, 'Impersonate-User': 'dan' });
    expect(r.metadata!.annotations![setBy]).toBe('impersonator:admin');
  });

  it('a large value-set-by on another kind counts in the 256 KiB budget (the exemption is as long as two names)', async () => {
    const big = 'x'.repeat(600 * 1024);
    const r = await send('POST', 'teams', { metadata: { name: 'fat', annotations: { [setBy]: big } }, spec: {} });
    expect(r.status, r.body.message).toBe(422);
  });
});
