/**
 * Review of issue 27: an existing scope that names `ownedaccesskeys/*` (all subresources; before
 * this change that was only `status`, whose writes are for access-keys admins alone) now lets a key
 * set a key's value through the new `rotation` subresource, while a PUT of spec.key stays refused
 * by the same scope. Documented as kube semantics ("or name the rotation subresource"), but it
 * widens scopes already issued. This test records the behaviour (it passes on integ); the lead
 * decides whether `*` should cover rotation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/clock.js';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create, json } from './fixture.js';

describe('review: ownedaccesskeys/* in an existing scope now covers rotation', () => {
  let server: InProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a key scoped to update ownedaccesskeys/* cannot PUT spec.key but can rotate', async () => {
    const clock = new ManualClock('2026-11-27T10:00:00Z');
    server = await startInProcess({ now: clock.now });
    const s = server;
    const made = await create(s, 'ownedaccesskeys', { metadata: { name: 'sub' }, spec: { user: 'sub', scope: { rules: [{ verbs: ['get', 'update'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys/*'] }] }] } } });
    const key = ((await made.json()) as { spec: { key: string } }).spec.key;
    const cur = (await (await s.fetch(`${s.api}/ownedaccesskeys/sub`)).json()) as Record<string, unknown> & { spec: Record<string, unknown> };
    const put = await s.fetch(`${s.api}/ownedaccesskeys/sub`, { method: 'PUT', headers: { ...json, Authorization: `Bearer ${key}` }, body: JSON.stringify({ ...cur, spec: { ...cur.spec, key: `New${'n'.repeat(40)}` } }) });
    const rot = await s.fetch(`${s.api}/ownedaccesskeys/sub/rotation`, { method: 'POST', headers: { ...json, Authorization: `Bearer ${key}` }, body: JSON.stringify({ kind: 'KeyRotation', spec: {} }) });
    expect({ put: put.status, rotation: rot.status }).toEqual({ put: 403, rotation: 201 });
  });
});
