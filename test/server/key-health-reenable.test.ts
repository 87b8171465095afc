/**
 * Adversarial review of issue 27 (--disable-unused-after): reEnabledAt() treats ANY write by a
 * non-server field manager to a key carrying the disabled-reason annotation as a re-enable, and
 * the annotation is never removed. So a key that was disabled once and re-enabled is never
 * disabled again as long as something writes it now and then (the monthly scheduled rotation
 * does), though nobody ever uses it. A user can also set the annotation on a fresh key himself.
 * Expected: the fresh window counts from the re-enable (spec.disabled true -> false), not from
 * every later write; or the annotation is dropped on re-enable.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, day } from '../support/clock.js';
import { startInProcess, type InProcess } from './in-process.js';
import { reEnabledAtAnnotation } from '../../src/api/re-enable.js';
import { disabledReasonAnnotation } from '../../src/api/key-notices.js';

const start = '2026-08-01T00:00:00Z';

describe('review: unused keys evading the sweep', () => {
  let server: InProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a never-used key rotated monthly stays enabled for ever once it was re-enabled', async () => {
    const clock = new ManualClock(start);
    server = await startInProcess({ now: clock.now, keyHealth: { intervalMs: day, disableUnusedAfterMs: 90 * day } });
    const s = server;
    await vi.waitFor(() => expect(s.keyHealthSweep?.leading).toBe(true));
    const keys = s.registry.ownedaccesskeys;
    await keys.create({ apiVersion: keys.info.apiVersion, kind: 'OwnedAccessKey', metadata: { name: 'ci' }, spec: { user: 'ci' } }, { fieldManager: 'test' });
    const disabled = async () => ((await keys.get('ci')) as { spec: { disabled?: boolean } }).spec.disabled === true;
    clock.advance(91 * day);
    await s.keyHealthSweep!.sweep();
    expect(await disabled()).toBe(true);
    // Someone re-enables it (fresh 90-day window from now: fine).
    await keys.patch('ci', 'merge', { spec: { disabled: false } }, { fieldManager: 'kubectl-edit' });
    // It is never used again; the scheduled rotation rotates it every 30 days (a write, not a use).
    for (let month = 0; month < 8; month++) {
      clock.advance(30 * day);
      await keys.rotate('ci', { kind: 'KeyRotation', spec: { overlapSeconds: 3600 } }, { fieldManager: 'teamkeys-gitops' });
      await s.keyHealthSweep!.sweep();
    }
    // 240 days after the re-enable, never used: expected disabled. integ: still enabled.
    expect(await disabled()).toBe(true);
  });
  it('a user cannot set the re-enabled-at annotation: a create drops it, a later write keeps the server\'s', async () => {
    const clock = new ManualClock(start);
    server = await startInProcess({ now: clock.now, keyHealth: { intervalMs: day, disableUnusedAfterMs: 90 * day } });
    const s = server;
    await vi.waitFor(() => expect(s.keyHealthSweep?.leading).toBe(true));
    const keys = s.registry.ownedaccesskeys;
    const far = '2099-01-01T00:00:00Z';
    const annotations = { [reEnabledAtAnnotation]: far, [disabledReasonAnnotation]: 'set by hand' };
    await keys.create({ apiVersion: keys.info.apiVersion, kind: 'OwnedAccessKey', metadata: { name: 'sly', annotations }, spec: { user: 'sly' } }, { fieldManager: 'test' });
    const read = async () => (await keys.get('sly')) as { metadata: { annotations?: Record<string, string> }; spec: { disabled?: boolean } };
    expect((await read()).metadata.annotations?.[reEnabledAtAnnotation]).toBeUndefined();
    await keys.patch('sly', 'merge', { metadata: { annotations: { [reEnabledAtAnnotation]: far } } }, { fieldManager: 'kubectl-edit' });
    expect((await read()).metadata.annotations?.[reEnabledAtAnnotation]).toBeUndefined();
    clock.advance(91 * day);
    await s.keyHealthSweep!.sweep();
    expect((await read()).spec.disabled).toBe(true);
    // The re-enable is recorded by the server at its moment; a later write cannot move it.
    clock.advance(day);
    await keys.patch('sly', 'merge', { spec: { disabled: false } }, { fieldManager: 'kubectl-edit' });
    const at = (await read()).metadata.annotations?.[reEnabledAtAnnotation];
    expect(at).toBe(new Date(clock.now().getTime()).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    await keys.patch('sly', 'merge', { metadata: { annotations: { [reEnabledAtAnnotation]: far } } }, { fieldManager: 'kubectl-edit' });
    expect((await read()).metadata.annotations?.[reEnabledAtAnnotation]).toBe(at);
  });
});
