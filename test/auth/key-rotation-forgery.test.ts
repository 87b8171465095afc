/**
 * Adversarial probes (issue 27) that PASS on integ@89de859 (kept as regression guards): status.rotation
 * through server-side apply of the status subresource, and `sealed.previousKeyHash` smuggled in
 * bodies of create, PUT, merge patch and apply cannot make a chosen value authenticate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/clock.js';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create, json } from './fixture.js';
import { hashKey } from '../../src/api/secrets.js';

const t0 = '2026-11-27T10:00:00Z';
interface Key {
  metadata: { name: string; resourceVersion: string };
  spec: { key?: string; user?: string };
  status?: { rotation?: Record<string, unknown> };
}

describe('review: forgery probes', () => {
  let server: InProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('apply (force) of the status subresource keeps status.rotation; sealed in any body is ignored', async () => {
    const clock = new ManualClock(t0);
    server = await startInProcess({ now: clock.now });
    const s = server;
    const made = await create(s, 'ownedaccesskeys', { metadata: { name: 'k' }, spec: { user: 'k' } });
    expect(made.status).toBe(201);
    const rot = await s.fetch(`${s.api}/ownedaccesskeys/k/rotation`, { method: 'POST', headers: json, body: JSON.stringify({ kind: 'KeyRotation', spec: { overlapSeconds: 60 } }) });
    expect(rot.status).toBe(201);
    const far = '2099-01-01T00:00:00Z';
    const apply = await s.fetch(`${s.api}/ownedaccesskeys/k/status?fieldManager=forger&force=true`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'k' }, status: { rotation: { rotatedAt: t0, overlapSeconds: 60, previousValidUntil: far, awaitingConfirmation: true } } }),
    });
    // 415 on integ (apply is not served on /status); either way status.rotation must be unchanged.
    expect([200, 415]).toContain(apply.status);
    const read = async () => (await (await s.fetch(`${s.api}/ownedaccesskeys/k`)).json()) as Key;
    expect((await read()).status?.rotation).toEqual({ rotatedAt: t0, overlapSeconds: 60, previousValidUntil: '2026-11-27T10:01:00Z' });
    // sealed smuggled: a chosen value's hash as previousKeyHash, during the overlap.
    const chosen = `Chosen${'c'.repeat(40)}`;
    const sealed = { previousKeyHash: hashKey(chosen) };
    const cur = await read();
    const attempts = [
      await s.fetch(`${s.api}/ownedaccesskeys/k`, { method: 'PUT', headers: json, body: JSON.stringify({ ...cur, sealed }) }),
      await s.fetch(`${s.api}/ownedaccesskeys/k`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ sealed, metadata: { labels: { a: 'b' } } }) }),
      await s.fetch(`${s.api}/ownedaccesskeys/k?fieldManager=x&force=true`, { method: 'PATCH', headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'k' }, spec: { user: 'k' }, sealed }) }),
      await create(s, 'ownedaccesskeys', { metadata: { name: 'k2' }, spec: { user: 'k2' }, sealed, status: { rotation: { awaitingConfirmation: true } } }),
    ];
    for (const res of attempts) await res.text();
    for (const name of ['k', 'k2']) {
      const res = await s.fetch(`${s.api}/ownedaccesskeys/${name}`, { headers: { Authorization: `Bearer ${chosen}` } });
      expect(res.status, `${name}: ${attempts.map((a) => a.status).join(',')}`).toBe(401);
    }
  });
});
