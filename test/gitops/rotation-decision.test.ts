/**
 * The rotation decision, pure (src/gitops/plan/rotation.ts): when a key is due, why, with which
 * overlap; when `teamkeys keys` says it is next due; when a daemon must wake. Held here on the
 * functions themselves, so the mutation run (vitest.mutation.config.ts) reaches what only the CLI
 * tests showed before.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { dueRotation, nextRotation, scheduledRotationDue, valueSetAt } from '../../src/gitops/plan/rotation.js';
import type { DesiredObject } from '../../src/gitops/validate.js';
import { day, hour } from '../support/clock.js';

const v1 = 'management.service/v1';
const created = '2026-10-01T00:00:00Z';
const t0 = Date.parse(created);
const sink = 'github:acme/payments/DEPLOY_KEY';
const ann = (k: string) => `gitops.management.service/${k}`;
const key = (annotations: Record<string, string> = {}, status?: Record<string, unknown>, creationTimestamp: string | null = created): KubeObject => ({
  apiVersion: v1,
  kind: 'OwnedAccessKey',
  metadata: { name: 'deploy', ...(creationTimestamp ? { creationTimestamp } : {}), annotations },
  spec: { user: 'ci-bot' },
  ...(status ? { status } : {}),
});
const monthly = { [ann('key-secret')]: sink, [ann('rotate-every')]: '30d' };
const at = (ms: number) => new Date(t0 + ms);

describe('dueRotation: the rotation a key needs now', () => {
  it('is due exactly when the value is as old as rotate-every, not a second before', () => {
    expect(dueRotation(key(monthly), key(monthly), at(30 * day - 1000))).toBeUndefined();
    expect(dueRotation(key(monthly), key(monthly), at(30 * day))).toEqual({ reason: 'due', sink, rotateEvery: '30d', overlap: '6h', overlapSeconds: 21_600, ageSeconds: 30 * 86_400 });
  });

  it('reads rotate-every and rotation-overlap with spaces around them, and reports them trimmed', () => {
    const spaced = { ...monthly, [ann('rotate-every')]: ' 30d ', [ann('rotation-overlap')]: ' 90m ' };
    expect(dueRotation(key(spaced), key(), at(31 * day))).toMatchObject({ rotateEvery: '30d', overlap: '90m', overlapSeconds: 5400 });
  });

  it('a rotation-overlap that is no duration falls back to the default overlap of 6h', () => {
    const r = dueRotation(key({ ...monthly, [ann('rotation-overlap')]: 'soon' }), key(), at(31 * day));
    expect(r).toMatchObject({ overlap: 'soon', overlapSeconds: 21_600 });
  });

  it('the sink the planner settled on wins over key-secret (a stranded --key-dir file)', () => {
    expect(dueRotation(key(monthly), key(), at(31 * day), undefined, 'file:deploy.key')?.sink).toBe('file:deploy.key');
    expect(dueRotation(key({ [ann('rotate-every')]: '30d' }), key(), at(31 * day))).toBeUndefined();
    expect(dueRotation(key({ [ann('rotate-every')]: '30d' }), key(), at(31 * day), undefined, 'file:deploy.key')).toMatchObject({ reason: 'due', sink: 'file:deploy.key' });
  });

  it('a moved or unrecorded delivery rotates at once without rotate-every, named so and without rotateEvery', () => {
    const noSchedule = key({ [ann('key-secret')]: sink });
    expect(dueRotation(noSchedule, key(), at(day))).toBeUndefined();
    expect(dueRotation(noSchedule, key(), at(day), 'moved')).toStrictEqual({ reason: 'moved', sink, overlap: '6h', overlapSeconds: 21_600, ageSeconds: 86_400 });
    expect(dueRotation(key(monthly), key(), at(day), 'unrecorded')).toMatchObject({ reason: 'unrecorded', rotateEvery: '30d' });
  });

  it('an unconfirmed rotation is retried before the schedule says; a confirmed one waits', () => {
    const rotatedAt = at(day).toISOString();
    expect(dueRotation(key(monthly), key({}, { rotation: { rotatedAt, awaitingConfirmation: true } }), at(2 * day))).toMatchObject({ reason: 'unconfirmed', ageSeconds: 86_400 });
    expect(dueRotation(key(monthly), key({}, { rotation: { rotatedAt, awaitingConfirmation: false } }), at(2 * day))).toBeUndefined();
  });

  it('a value set in the future (a skewed clock) is 0 s old, and the age is in whole seconds', () => {
    expect(dueRotation(key(monthly), key(), at(-hour), 'moved')?.ageSeconds).toBe(0);
    expect(dueRotation(key(monthly), key(), at(31 * day + 1999))?.ageSeconds).toBe(31 * 86_400 + 1);
  });

  it('a key whose value time is unknown counts as new: not due on the schedule, age 0 when moved', () => {
    expect(dueRotation(key(monthly), key({}, undefined, null), at(400 * day))).toBeUndefined();
    expect(dueRotation(key(monthly), key({}, undefined, null), at(400 * day), 'moved')?.ageSeconds).toBe(0);
  });
});

describe('valueSetAt: when the current value was made', () => {
  it('is the last rotation when there was one, else the creation; undefined for no or a bad time', () => {
    expect(valueSetAt(key({}, { rotation: { rotatedAt: at(5 * day).toISOString() } }))).toEqual(at(5 * day));
    expect(valueSetAt(key({}, { rotation: 'broken' }))).toEqual(at(0));
    expect(valueSetAt(key({}, 'broken' as unknown as Record<string, unknown>))).toEqual(at(0));
    expect(valueSetAt(key({}, undefined, null))).toBeUndefined();
    expect(valueSetAt(key({}, undefined, 'yesterday'))).toBeUndefined();
  });
});

describe('scheduledRotationDue: what `teamkeys keys` shows as next due', () => {
  it('is the value time plus rotate-every (trimmed), or the value time itself while a rotation awaits confirmation', () => {
    expect(scheduledRotationDue(key(monthly))).toEqual(at(30 * day));
    expect(scheduledRotationDue(key({ ...monthly, [ann('rotate-every')]: ' 7d ' }))).toEqual(at(7 * day));
    const awaiting = key(monthly, { rotation: { rotatedAt: at(3 * day).toISOString(), awaitingConfirmation: true } });
    expect(scheduledRotationDue(awaiting)).toEqual(at(3 * day));
  });

  it('is undefined without a schedule, a valid schedule, a sink or a value time', () => {
    expect(scheduledRotationDue(key({ [ann('key-secret')]: sink }))).toBeUndefined();
    expect(scheduledRotationDue(key({ ...monthly, [ann('rotate-every')]: 'monthly' }))).toBeUndefined();
    expect(scheduledRotationDue(key({ [ann('rotate-every')]: '30d' }))).toBeUndefined();
    expect(scheduledRotationDue(key(monthly, undefined, null))).toBeUndefined();
    expect(scheduledRotationDue({ ...key(), metadata: { name: 'bare', creationTimestamp: created } })).toBeUndefined();
  });
});

describe('nextRotation: when a daemon must plan again', () => {
  const manifest = { file: 'keys.yaml', line: 1, column: 1, object: {}, locate: () => ({ file: 'keys.yaml', line: 1, column: 1 }) };
  const want = (name: string, annotations?: Record<string, string>, plural: 'ownedaccesskeys' | 'teams' = 'ownedaccesskeys'): DesiredObject => ({
    plural,
    obj: { apiVersion: v1, kind: plural === 'teams' ? 'Team' : 'OwnedAccessKey', metadata: { name, ...(annotations ? { annotations } : {}) }, spec: {} },
    manifest,
  });
  const live = (name: string, status?: Record<string, unknown>, creationTimestamp: string | null = created): KubeObject => ({ ...key(monthly, status, creationTimestamp), metadata: { ...key(monthly, status, creationTimestamp).metadata, name } });

  it('is the earliest due time of the keys git schedules, whichever order they come in', () => {
    const desired = [want('a', { ...monthly, [ann('rotate-every')]: '7d' }), want('b', monthly), want('c', { ...monthly, [ann('rotate-every')]: ' 14d ' })];
    const keys = { ownedaccesskeys: [live('a'), live('b'), live('c')] };
    expect(nextRotation(desired, keys)).toEqual(at(7 * day));
    expect(nextRotation([...desired].reverse(), keys)).toEqual(at(7 * day));
    expect(nextRotation([want('b', monthly), want('c', { ...monthly, [ann('rotate-every')]: ' 14d ' })], keys)).toEqual(at(14 * day));
  });

  it('is now (time 0) for a key awaiting confirmation or whose value time is unknown', () => {
    expect(nextRotation([want('b', monthly), want('a', monthly)], { ownedaccesskeys: [live('a', { rotation: { awaitingConfirmation: true } }), live('b')] })).toEqual(new Date(0));
    expect(nextRotation([want('a', monthly)], { ownedaccesskeys: [live('a', undefined, 'never')] })).toEqual(new Date(0));
  });

  it('ignores teams, keys without a schedule and keys not live yet', () => {
    expect(nextRotation([want('a', monthly, 'teams')], { ownedaccesskeys: [live('a')] })).toBeUndefined();
    expect(nextRotation([want('a', { [ann('key-secret')]: sink }), want('b')], { ownedaccesskeys: [live('a'), live('b')] })).toBeUndefined();
    expect(nextRotation([want('gone', monthly)], { ownedaccesskeys: [live('a')] })).toBeUndefined();
  });
});
