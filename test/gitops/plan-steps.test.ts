/**
 * Each kind of step the pure planner (src/gitops/plan/plan.ts) makes, with the reason a user reads:
 * what is skipped and why, what a former source id protects, a key rotated with nothing else to
 * change, a --key-dir file never confirmed written, and drift named again once the audit trail is
 * read (withTrail). The CLI tests reach these too; the mutation run leaves those out.
 */
import { describe, expect, it } from 'vitest';
import { resourceModels } from '../../src/api/model.js';
import type { KubeObject, ManagedFieldsEntry } from '../../src/api/types.js';
import { draftReconcile, planObject, planReconcile, withTrail, type PlanOptions } from '../../src/gitops/plan/plan.js';
import type { DesiredObject } from '../../src/gitops/validate.js';
import { teamPatch } from './audit-events.js';

const models = resourceModels();
const v1 = 'management.service/v1';
const src = 'gitops.management.service/source';
const manifest = { file: 'x.yaml', line: 3, column: 5, object: {}, locate: () => ({ file: 'x.yaml', line: 3, column: 5 }) };
const opts: PlanOptions = { sourceId: 's', prune: true, allowEmpty: false, maxPrune: 10 };
const want = (name: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>): DesiredObject => ({
  plural: 'teams',
  obj: { apiVersion: v1, kind: 'Team', metadata: { name, ...(annotations ? { annotations } : {}) }, spec },
  manifest,
});
const team = (name: string, annotations: Record<string, string> = { [src]: 's' }, more: Partial<KubeObject['metadata']> = {}, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: v1,
  kind: 'Team',
  metadata: { name, uid: `uid-${name}`, resourceVersion: '4', annotations, ...more },
  spec,
});

describe('a live object git does not describe', () => {
  it.each([
    ['managed by another source', team('t', { [src]: 'other' }), 'not managed by this source'],
    ['managed by nobody', team('t', {}), 'not managed by this source'],
    ['already being deleted', team('t', { [src]: 's' }, { deletionTimestamp: '2026-01-01T00:00:00Z' }), 'already being deleted'],
    ['with pruning disabled', team('t', { [src]: 's', 'gitops.management.service/prune': 'disabled' }), 'not in the source; pruning disabled by gitops.management.service/prune'],
  ])('is skipped when %s, and says why', (_label, live, reason) => {
    expect(planObject(models.teams, undefined, live, opts)).toEqual({ kind: 'Team', plural: 'teams', name: 't', changes: [], drift: false, type: 'skip', reason });
  });

  it('is deleted with its uid and resourceVersion as preconditions when this source manages it and --prune is on', () => {
    expect(planObject(models.teams, undefined, team('t'), opts)).toMatchObject({ type: 'delete', reason: 'not in the source', preconditions: { uid: 'uid-t', resourceVersion: '4' } });
  });

  it("carrying one of this source's former ids, it is never pruned, and the reason says how to delete it", () => {
    const step = planObject(models.teams, undefined, team('t', { [src]: 'old-id' }), { ...opts, formerSourceIds: ['old-id'] });
    expect(step.type).toBe('skip');
    expect(step.reason).toBe(
      'not in the source, and annotated with "old-id", a former default id of this source (now "s"): not pruned, as another source may share that old id; delete it by hand, or prune once with --source-id "old-id"',
    );
  });

  it("the whole plan lists an object under a former id, and leaves other sources' objects out (with or without former ids given)", () => {
    const live = { teams: [team('a', { [src]: 'old-id' }), team('b', { [src]: 'other' }), team('c', {})] };
    expect(planReconcile([], live, models, { ...opts, prune: false, formerSourceIds: ['old-id'] }).actions.map((a) => `${a.type} ${a.name}`)).toEqual(['skip a']);
    expect(planReconcile([], live, models, { ...opts, prune: false }).actions).toEqual([]);
  });
});

describe('a live object git describes', () => {
  it('managed by another source is skipped, naming that source except in a pull request', () => {
    const step = planObject(models.teams, want('t', { displayName: 'New' }), team('t', { [src]: 'other' }), opts);
    expect(step).toMatchObject({ type: 'skip', reason: 'managed by another source (other)', reasonWithheld: 'managed by another source (which one is not shown in a pull request)', location: { file: 'x.yaml', line: 3, column: 5 } });
  });

  it("under a former id of this source it is adopted: updated and marked with the current id", () => {
    const step = planObject(models.teams, want('t', { displayName: 'New' }), team('t', { [src]: 'old-id' }), { ...opts, formerSourceIds: ['old-id'] });
    expect(step.type).toBe('update');
    expect(step.patch).toContainEqual({ op: 'replace', path: `/metadata/annotations/${src.replace('/', '~1')}`, value: 's' });
  });

  it('being deleted on the server is skipped', () => {
    const step = planObject(models.teams, want('t', { displayName: 'New' }), team('t', { [src]: 's' }, { deletionTimestamp: '2026-01-01T00:00:00Z' }), opts);
    expect(step).toMatchObject({ type: 'skip', reason: 'being deleted on the server' });
  });
});

describe('keys whose value must go somewhere', () => {
  const key = (annotations: Record<string, string>, status?: Record<string, unknown>): KubeObject => ({
    apiVersion: v1,
    kind: 'OwnedAccessKey',
    metadata: { name: 'deploy', uid: 'uid-deploy', resourceVersion: '8', creationTimestamp: '2026-01-01T00:00:00Z', annotations: { [src]: 's', ...annotations } },
    spec: { user: 'ci-bot' },
    ...(status ? { status } : {}),
  });
  const wantKey = (annotations: Record<string, string> = {}): DesiredObject => ({ plural: 'ownedaccesskeys', obj: { apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name: 'deploy', annotations }, spec: { user: 'ci-bot' } }, manifest });
  const sinkAnn = { 'gitops.management.service/key-secret': 'github:acme/app/DEPLOY_KEY' };
  const now = () => new Date('2026-01-02T00:00:00Z');

  it('a key never delivered to its sink, and otherwise unchanged, is one guarded update that rotates it', () => {
    const step = planObject(models.ownedaccesskeys, wantKey(sinkAnn), key(sinkAnn), { ...opts, now });
    expect(step).toMatchObject({ type: 'update', rotateKey: true, keySecret: 'github:acme/app/DEPLOY_KEY', patch: [{ op: 'replace', path: '/metadata/resourceVersion', value: '8' }] });
    expect(step.patch).toHaveLength(1);
    expect(step.rotation).toBeUndefined();
  });

  it('a key whose rotation awaits confirmation is not rotated again at once: the scheduled path retries it', () => {
    const step = planObject(models.ownedaccesskeys, wantKey(sinkAnn), key(sinkAnn, { rotation: { awaitingConfirmation: true } }), { ...opts, now });
    expect(step.rotateKey).toBeUndefined();
    expect(step).toMatchObject({ type: 'update', keySecret: 'github:acme/app/DEPLOY_KEY', rotation: { sink: 'github:acme/app/DEPLOY_KEY' } });
  });

  it('a key whose --key-dir file apply never confirmed written is delivered there again, as an unrecorded first delivery', () => {
    const step = planObject(models.ownedaccesskeys, wantKey(), key({ 'gitops.management.service/key-delivered': 'pending:file:deploy.key' }), { ...opts, now });
    expect(step).toMatchObject({ type: 'update', keySecret: 'file:deploy.key', rotation: { reason: 'unrecorded', sink: 'file:deploy.key' } });
    // One whose file was written is left alone; so is a team, which has no key.
    expect(planObject(models.ownedaccesskeys, wantKey(), key({ 'gitops.management.service/key-delivered': 'file:deploy.key' }), { ...opts, now }).type).toBe('unchanged');
  });

  it('a key created from git goes to its declared sink', () => {
    expect(planObject(models.ownedaccesskeys, wantKey(sinkAnn), undefined, opts)).toMatchObject({ type: 'create', keySecret: 'github:acme/app/DEPLOY_KEY' });
    expect(planObject(models.ownedaccesskeys, wantKey(), undefined, opts).keySecret).toBeUndefined();
  });
});

describe('withTrail: drift named again from the audit trail, without a second diff', () => {
  const entry = (manager: string, time: string, spec: Record<string, unknown>): ManagedFieldsEntry => ({ manager, operation: 'Update', apiVersion: v1, time, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': spec } });
  const event = teamPatch;

  it('names the person who removed a field, which managedFields alone could not call drift', () => {
    const live = team('t', { [src]: 's' }, { managedFields: [entry('gitops', '2026-01-01T00:00:00Z', { 'f:displayName': {}, 'f:description': {} })] }, { displayName: 'T' });
    const { drafted } = draftReconcile([want('t', { displayName: 'T', description: 'd' })], { teams: [live] }, models, opts);
    expect(drafted[0]!.step.changes).toEqual([expect.objectContaining({ path: 'spec.description', drift: false })]);
    expect(drafted[0]!.step.drift).toBe(false);
    const named = withTrail(drafted[0]!, [event(2, 'gitops', 'system:teamkeys', { added: ['.spec.description'] }), event(3, 'kubectl-edit', 'olga', { removed: ['.spec.description'] })]);
    expect(named.drift).toBe(true);
    expect(named.changes).toEqual([expect.objectContaining({ path: 'spec.description', drift: true, lastChangedBy: expect.objectContaining({ user: 'olga', manager: 'kubectl-edit' }), description: 'removed spec.description' })]);
    expect(named.type).toBe('update');
    // A trail showing no removal: not drift, and the step keeps its write.
    const none = withTrail(drafted[0]!, [event(2, 'gitops', 'system:teamkeys', {}), event(3, 'kubectl-label', 'bob', { added: ['.metadata.labels.x'] })]);
    expect([none.drift, none.changes[0]!.drift, none.patch]).toEqual([false, false, drafted[0]!.step.patch]);
  });

  it('one drifted field among several makes the step drift', () => {
    const live = team('t', { [src]: 's' }, { managedFields: [entry('gitops', '2026-01-01T00:00:00Z', { 'f:displayName': {}, 'f:description': {} })] }, { displayName: 'Old' });
    const { drafted } = draftReconcile([want('t', { displayName: 'New', description: 'd' })], { teams: [live] }, models, opts);
    const named = withTrail(drafted[0]!, [event(2, 'gitops', 'system:teamkeys', {}), event(3, 'kubectl-edit', 'olga', { removed: ['.spec.description'] })]);
    expect(named.changes.map((c) => [c.path, c.drift])).toEqual([['spec.description', true], ['spec.displayName', false]]);
    expect(named.drift).toBe(true);
  });

  it('a step without changed fields (create, skip, unchanged) is returned as it was', () => {
    const { drafted } = draftReconcile([want('new', { displayName: 'N' }), want('same', {})], { teams: [team('same', { [src]: 's' }, {}, {})] }, models, opts);
    for (const d of drafted) expect(withTrail(d, [event(3, 'kubectl-edit', 'olga', { removed: ['.spec.displayName'] })])).toBe(d.step);
    expect(drafted.map((d) => d.step.type)).toEqual(['create', 'unchanged']);
  });
});

describe('the guards on a whole plan', () => {
  const managedTeams = (...names: string[]) => ({ teams: names.map((n) => team(n)), ownedaccesskeys: [team('k', { [src]: 'other' })] });

  it('an empty source is refused with the count of objects this source manages, unless --allow-empty', () => {
    const refused = planReconcile([], managedTeams('a', 'b'), models, opts);
    expect(refused.refused).toBe('the source holds no objects but 2 live object(s) are managed by it: refusing to prune them all (use --allow-empty if that is intended)');
    expect(planReconcile([], managedTeams('a', 'b'), models, { ...opts, allowEmpty: true }).refused).toBeUndefined();
    // Nothing live is managed by this source: nothing to refuse.
    expect(planReconcile([], { teams: [team('x', { [src]: 'other' })] }, models, opts).refused).toBeUndefined();
  });

  it('--max-prune refuses more deletions than it allows, and allows exactly that many', () => {
    expect(planReconcile([want('keep')], managedTeams('a', 'b', 'keep'), models, { ...opts, maxPrune: 2 }).refused).toBeUndefined();
    expect(planReconcile([want('keep')], managedTeams('a', 'b', 'keep'), models, { ...opts, maxPrune: 1 }).refused).toBe(
      'the plan would delete 2 object(s), more than --max-prune 1: refusing (raise --max-prune if that is intended)',
    );
    expect(planReconcile([want('keep')], managedTeams('keep'), models, { ...opts, maxPrune: 0 }).refused).toBeUndefined();
  });

  it('orders owners before what refers to them, and deletes the other way round, by name within a kind', () => {
    const key = (name: string): KubeObject => ({ ...team(name), kind: 'OwnedAccessKey' });
    const cred = (name: string): KubeObject => ({ ...team(name), kind: 'FederatedCredential' });
    const wantOf = (plural: 'teams' | 'ownedaccesskeys' | 'federatedcredentials', kind: string, name: string): DesiredObject => ({ plural, obj: { apiVersion: v1, kind, metadata: { name }, spec: {} }, manifest });
    const plan = planReconcile(
      [wantOf('federatedcredentials', 'FederatedCredential', 'c-new'), wantOf('ownedaccesskeys', 'OwnedAccessKey', 'k-new'), want('t-b'), want('t-a')],
      { teams: [team('t-old')], ownedaccesskeys: [key('k-old2'), key('k-old1')], federatedcredentials: [cred('c-old')] } as Parameters<typeof planReconcile>[1],
      models,
      opts,
    );
    expect(plan.actions.map((a) => `${a.type} ${a.name}`)).toEqual(['create t-a', 'create t-b', 'create k-new', 'create c-new', 'delete c-old', 'delete k-old1', 'delete k-old2', 'delete t-old']);
  });
});

