/**
 * Scheduled rotation, planned (pure, by a clock moved by hand) and validated: a key rotates when
 * its value is older than rotate-every or an earlier rotation was never confirmed; bad schedules
 * are errors at file:line:col before anything is planned.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resourceModels } from '../../src/api/model.js';
import type { KubeObject } from '../../src/api/types.js';
import { planReconcile, type PlanOptions } from '../../src/gitops/plan/plan.js';
import { nextRotation } from '../../src/gitops/plan/rotation.js';
import { validateSource } from '../../src/gitops/reconcile.js';
import { buildReport } from '../../src/gitops/report/report.js';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import { renderText } from '../../src/gitops/report/text.js';
import type { DesiredObject } from '../../src/gitops/validate.js';
import { day, hour, ManualClock } from '../support/clock.js';

const models = resourceModels();
const v1 = 'management.service/v1';
const manifest = { file: 'keys.yaml', line: 1, column: 1, object: {}, locate: () => ({ file: 'keys.yaml', line: 1, column: 1 }) };
const created = '2026-10-01T00:00:00Z';
const sink = 'github:acme/payments/DEPLOY_KEY';

const want = (name: string, a: Record<string, string>): DesiredObject => ({
  plural: 'ownedaccesskeys',
  obj: { apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name, annotations: a }, spec: { user: 'ci-bot' } },
  manifest,
});
/** The live key as the server holds it: annotated as delivered to its sink (so only the schedule decides). */
const live = (name: string, status: Record<string, unknown> = {}, delivered = sink, more: Record<string, string> = {}): KubeObject => ({
  apiVersion: v1,
  kind: 'OwnedAccessKey',
  metadata: {
    name,
    uid: `uid-${name}`,
    resourceVersion: '7',
    creationTimestamp: created,
    annotations: { 'gitops.management.service/source': 's', 'gitops.management.service/key-secret': delivered, 'gitops.management.service/rotate-every': '30d', 'gitops.management.service/key-delivered': delivered, ...more },
  },
  spec: { user: 'ci-bot' },
  status,
});
const monthly = { 'gitops.management.service/key-secret': sink, 'gitops.management.service/rotate-every': '30d' };

function plan(desired: DesiredObject[], keys: KubeObject[], clock: ManualClock) {
  const opts: PlanOptions = { sourceId: 's', prune: false, allowEmpty: false, maxPrune: 10, now: clock.now };
  return planReconcile(desired, { teams: [], ownedaccesskeys: keys }, models, opts);
}

describe('planning scheduled rotations by the clock', () => {
  it('a key younger than rotate-every is unchanged; the same key a day past it is rotated with the default overlap', () => {
    const clock = new ManualClock(Date.parse(created) + 29 * day);
    expect(plan([want('deploy', monthly)], [live('deploy')], clock).actions.map((a) => a.type)).toEqual(['unchanged']);
    clock.advance(2 * day);
    const [a] = plan([want('deploy', monthly)], [live('deploy')], clock).actions;
    expect(a).toMatchObject({ type: 'update', keySecret: sink, rotation: { reason: 'due', sink, rotateEvery: '30d', overlap: '6h', overlapSeconds: 21_600, ageSeconds: 31 * 86_400 } });
    expect(a!.patch).toHaveLength(1);
  });

  it("the value's age counts from the last rotation, not the creation", () => {
    const clock = new ManualClock(Date.parse(created) + 40 * day);
    const rotated = live('deploy', { rotation: { rotatedAt: new Date(Date.parse(created) + 20 * day).toISOString(), overlapSeconds: 3600 } });
    expect(plan([want('deploy', monthly)], [rotated], clock).actions[0]!.type).toBe('unchanged');
    clock.advance(11 * day);
    expect(plan([want('deploy', monthly)], [rotated], clock).actions[0]!.rotation).toMatchObject({ reason: 'due', ageSeconds: 31 * 86_400 });
  });

  it('a rotation still awaiting confirmation (its delivery failed) is retried, however young the value', () => {
    const clock = new ManualClock(Date.parse(created) + 2 * day);
    const awaiting = live('deploy', { rotation: { rotatedAt: new Date(Date.parse(created) + 2 * day - hour).toISOString(), overlapSeconds: 900, awaitingConfirmation: true } });
    const [a] = plan([want('deploy', { ...monthly, 'gitops.management.service/rotation-overlap': '15m' })], [awaiting], clock).actions;
    expect(a!.rotation).toMatchObject({ reason: 'unconfirmed', overlap: '15m', overlapSeconds: 900, ageSeconds: 3600 });
  });

  it('a rotation left unconfirmed is finished even after rotate-every was removed: its previous value would work with no deadline', () => {
    const clock = new ManualClock(Date.parse(created) + 2 * day);
    const awaiting = live('deploy', { rotation: { rotatedAt: new Date(Date.parse(created) + day).toISOString(), overlapSeconds: 900, awaitingConfirmation: true } });
    const [a] = plan([want('deploy', { 'gitops.management.service/key-secret': sink })], [awaiting], clock).actions;
    expect(a!.rotation).toEqual({ reason: 'unconfirmed', sink, overlap: '6h', overlapSeconds: 21_600, ageSeconds: 86_400 });
    const report = buildReport({ mode: 'plan', source: { id: 's', description: 'git' }, target: 'https://api', errors: [], plan: { sourceId: 's', actions: [a!] } });
    expect(renderText(report)).toContain('rotate key (the last rotation was never confirmed (its delivery failed): retried, value 1d old)');
  });

  it('a key without rotate-every, or whose key never reached any sink, gets no scheduled rotation; a delivered key moved to a new sink does', () => {
    const clock = new ManualClock(Date.parse(created) + 400 * day);
    expect(plan([want('deploy', { 'gitops.management.service/key-secret': sink })], [live('deploy')], clock).actions[0]!.type).toBe('unchanged');
    // A key never delivered anywhere: the delivery path rotates it at once (nobody holds its value); no second, scheduled rotation.
    const never = live('deploy');
    delete never.metadata.annotations!['gitops.management.service/key-delivered'];
    const fresh = plan([want('deploy', { ...monthly, 'gitops.management.service/key-secret': 'github:acme/payments/OTHER' })], [never], clock).actions[0]!;
    expect(fresh).toMatchObject({ type: 'update', rotateKey: true });
    expect(fresh.rotation).toBeUndefined();
    // A delivered key moved to a new sink: the scheduled path, so its holders keep the value for the overlap.
    const moved = plan([want('deploy', { ...monthly, 'gitops.management.service/key-secret': 'github:acme/payments/OTHER' })], [live('deploy')], clock).actions[0]!;
    expect(moved).toMatchObject({ type: 'update', rotation: { reason: 'moved', sink: 'github:acme/payments/OTHER', overlap: '6h', overlapSeconds: 21_600 } });
    expect(moved.rotateKey).toBeUndefined();
  });

  it('a rotation beside a change from git is one update that also rotates', () => {
    const clock = new ManualClock(Date.parse(created) + 31 * day);
    const desired = want('deploy', monthly);
    desired.obj.spec = { user: 'ci-bot', description: 'deploys payments' };
    const [a] = plan([desired], [live('deploy')], clock).actions;
    expect(a!.type).toBe('update');
    expect(a!.changes.map((c) => c.path)).toEqual(['spec.description']);
    expect(a!.rotation?.reason).toBe('due');
  });

  it('plan reports show each rotation: name, age, rotate-every, overlap, sink (text, Markdown and JSON)', () => {
    const clock = new ManualClock(Date.parse(created) + 31 * day);
    const hourly = { 'gitops.management.service/rotation-overlap': '1h' };
    const p = plan([want('deploy', { ...monthly, ...hourly })], [live('deploy', {}, sink, hourly)], clock);
    const report = buildReport({ mode: 'plan', source: { id: 's', description: 'git' }, target: 'https://api', errors: [], plan: p });
    expect(report.outcome).toBe('changes');
    expect(report.summary).toMatchObject({ update: 0, rotate: 1 });
    expect(report.objects[0]).toMatchObject({ name: 'deploy', action: 'rotate', rotation: { reason: 'due', age: '31d', rotateEvery: '30d', overlap: '1h', sink } });
    const text = renderText(report);
    expect(text).toContain('↻ OwnedAccessKey/deploy');
    expect(text).toContain(`rotate key (value 31d old, rotate-every 30d): new value to ${sink}; the previous value works 1h more once it is delivered`);
    expect(text).toContain('Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, 1 to rotate');
    const md = renderMarkdown(report);
    expect(md).toContain('## teamkeys plan: 1 to rotate');
    expect(md).toMatch(/\| rotate \| OwnedAccessKey\/deploy \|.*value 31d old, rotate-every 30d/);
  });

  it('tells a daemon when the next rotation falls due', () => {
    const desired = [want('a', monthly), want('b', { ...monthly, 'gitops.management.service/rotate-every': '7d' })];
    expect(nextRotation(desired, { ownedaccesskeys: [live('a'), live('b')] })).toEqual(new Date(Date.parse(created) + 7 * day));
    expect(nextRotation([want('c', { 'gitops.management.service/key-secret': sink })], { ownedaccesskeys: [live('c')] })).toBeUndefined();
  });
});

describe('validating rotation annotations', () => {
  const key = (name: string, annotations: Record<string, string>) =>
    `apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: ${name}
  annotations:
${Object.entries(annotations).map(([k, v]) => `    gitops.management.service/${k}: ${JSON.stringify(v)}`).join('\n')}
spec:
  user: ci-bot
`;
  async function validate(text: string) {
    const dir = mkdtempSync(join(tmpdir(), 'rotation-validate-'));
    writeFileSync(join(dir, 'keys.yaml'), text);
    return (await validateSource({ source: dir, sourceId: 'x' }, v1)).report.errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`);
  }

  it('accepts a schedule with a sink, and every sink form', async () => {
    const docs = ['github:acme/payments/DEPLOY_KEY', 'github-env:acme/payments/production/DEPLOY_KEY', 'github-org:acme/DEPLOY_KEY', 'file:ci/deploy.key'].map((s, i) =>
      key(`k${i}`, { 'key-secret': s, 'rotate-every': '30d', 'rotation-overlap': '1h' }),
    );
    expect(await validate(docs.join('---\n'))).toEqual([]);
  });

  it.each([
    [{ 'rotate-every': '30d' }, 'keys.yaml:6:5: gitops.management.service/rotate-every needs gitops.management.service/key-secret: a rotated value that goes nowhere breaks every user of the key'],
    [{ 'key-secret': sink, 'rotate-every': 'monthly' }, 'keys.yaml:7:5: gitops.management.service/rotate-every must be a duration such as 30d, 12h or 90m, not "monthly"'],
    [{ 'key-secret': sink, 'rotate-every': '30m' }, 'keys.yaml:7:5: gitops.management.service/rotate-every must be at least 1h, not 30m'],
    [{ 'key-secret': sink, 'rotate-every': '30d', 'rotation-overlap': '30d' }, 'keys.yaml:8:5: gitops.management.service/rotation-overlap 30d must be shorter than gitops.management.service/rotate-every 30d'],
    [{ 'key-secret': sink, 'rotate-every': '90d', 'rotation-overlap': '31d' }, 'keys.yaml:8:5: gitops.management.service/rotation-overlap must be at most 30d, not 31d'],
    [{ 'key-secret': sink, 'rotate-every': '30d', 'rotation-overlap': '1500ms' }, 'keys.yaml:8:5: gitops.management.service/rotation-overlap must be a duration such as 30d, 12h or 90m (whole seconds), not "1500ms"'],
    [{ 'key-secret': sink, 'rotation-overlap': '1h' }, 'keys.yaml:7:5: gitops.management.service/rotation-overlap takes effect only with gitops.management.service/rotate-every'],
    [{ 'key-secret': sink, 'rotate-every': '4h' }, 'keys.yaml:7:5: gitops.management.service/rotate-every 4h is not longer than the default overlap 6h: set gitops.management.service/rotation-overlap shorter than it'],
    [{ 'key-secret': 'github-env:acme/payments/DEPLOY_KEY' }, 'keys.yaml:6:5: gitops.management.service/key-secret must be github-env:OWNER/REPO/ENVIRONMENT/SECRET_NAME, not "github-env:acme/payments/DEPLOY_KEY"'],
    [{ 'key-secret': 'github-org:acme/GITHUB_TOKEN' }, 'keys.yaml:6:5: gitops.management.service/key-secret "GITHUB_TOKEN" is not a valid secret name'],
    [{ 'key-secret': 'vault:secret/ci' }, 'keys.yaml:6:5: gitops.management.service/key-secret must be one of github:OWNER/REPO/NAME, github-env:OWNER/REPO/ENVIRONMENT/NAME, github-org:ORG/NAME or file:PATH, not "vault:secret/ci"'],
  ])('%j is an error at the annotation', async (annotations, message) => {
    const errors = await validate(key('deploy', annotations));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^keys.yaml:\d+:\d+: /);
    expect(errors[0]!.replace(/^keys.yaml:\d+:\d+: /, "")).toContain(message.replace(/^keys.yaml:\d+:\d+: /, ""));
  });
});
