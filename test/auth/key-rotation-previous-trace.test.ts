/**
 * Review of issue 27 (forensics): a use of the previous value is recorded in status.rotation
 * (lastUsedValue: Previous, previousLastActivity), but the next rotation drops that record when the
 * last use was by the previous value, and the audit event of a write names the key but not which
 * value made it. The holder of a leaked previous value who rotates (see previous-value-writes)
 * leaves no trace of having used it. Expected: the record of the previous value's last use
 * survives the next rotation (or is in the audit event of the rotation).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, hour } from '../support/clock.js';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create, json } from './fixture.js';
import { auditApiVersion, type AuditEvent } from '../../src/api/audit-event.js';
import { apiPrefix } from '../../src/api/resources.js';

describe('review: the trace of a previous value\'s use', () => {
  let server: InProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('survives the next rotation', async () => {
    const clock = new ManualClock('2026-11-27T10:00:00Z');
    server = await startInProcess({ now: clock.now, activityIntervalMs: 1000 });
    const s = server;
    const made = await create(s, 'ownedaccesskeys', { metadata: { name: 'k' }, spec: { user: 'k' } });
    const leaked = ((await made.json()) as { spec: { key: string } }).spec.key;
    const post = (spec: Record<string, unknown>, token?: string) =>
      s.fetch(`${s.api}/ownedaccesskeys/k/rotation`, { method: 'POST', headers: { ...json, ...(token ? { Authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify({ kind: 'KeyRotation', spec }) });
    expect((await post({ overlapSeconds: 3600 })).status).toBe(201);
    clock.advance(hour / 2);
    expect((await s.fetch(`${s.api}/ownedaccesskeys/k`, { headers: { Authorization: `Bearer ${leaked}` } })).status).toBe(200);
    const read = async () => ((await (await s.fetch(`${s.api}/ownedaccesskeys/k`)).json()) as { status?: { rotation?: Record<string, unknown> } }).status?.rotation;
    // Wait for the activity write (off the request path).
    for (let i = 0; i < 50 && (await read())?.lastUsedValue !== 'Previous'; i++) await new Promise((r) => setTimeout(r, 20));
    const before = await read();
    expect(before).toMatchObject({ lastUsedValue: 'Previous', previousLastActivity: '2026-11-27T10:30:00Z' });
    clock.advance(1000);
    // The owner rotates again (the holder of the leaked value may not: key-rotation-previous-value.test.ts).
    expect((await post({ overlapSeconds: 60 })).status).toBe(201);
    const after = await read();
    // integ: { rotatedAt, overlapSeconds, previousValidUntil } only: the previous value's use is gone.
    expect(JSON.stringify(after)).toContain('2026-11-27T10:30:00Z');
  });
  it('the audit event of a write says when the previous value made it', async () => {
    const clock = new ManualClock('2026-11-27T10:00:00Z');
    server = await startInProcess({ now: clock.now, audit: true });
    const s = server;
    const made = await create(s, 'ownedaccesskeys', { metadata: { name: 'ops' }, spec: { user: 'admin' } });
    const old = ((await made.json()) as { spec: { key: string } }).spec.key;
    const rotated = await s.fetch(`${s.api}/ownedaccesskeys/ops/rotation`, { method: 'POST', headers: json, body: JSON.stringify({ kind: 'KeyRotation', spec: { overlapSeconds: 3600 } }) });
    const fresh = ((await rotated.json()) as { spec: { key: string } }).spec.key;
    const team = (name: string, token: string) =>
      s.fetch(`${s.api}/teams`, { method: 'POST', headers: { ...json, Authorization: `Bearer ${token}` }, body: JSON.stringify({ metadata: { name }, spec: {} }) });
    expect((await team('by-old', old)).status).toBe(201);
    expect((await team('by-fresh', fresh)).status).toBe(201);
    const events = async (name: string) =>
      ((await (await s.fetch(`${s.base}${apiPrefix}/apis/${auditApiVersion}/events?resource=teams&name=${name}`)).json()) as { items: AuditEvent[] }).items;
    const [byOld] = await events('by-old');
    const [byFresh] = await events('by-fresh');
    expect(byOld?.user.keyName).toBe('ops');
    expect(byOld?.annotations).toEqual({ 'authentication.management.service/key-value': 'previous' });
    expect(byFresh?.annotations).toBeUndefined();
  });
});
