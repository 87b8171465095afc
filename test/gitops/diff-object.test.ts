/**
 * What the diff (src/gitops/plan/diff.ts) writes beyond spec: the metadata a user declares in git
 * (finalizers beside labels and annotations) is laid over the live object, and a replace keeps what
 * git does not decide (the live finalizers, the server's fields).
 */
import { describe, expect, it } from 'vitest';
import { resourceModels } from '../../src/api/model.js';
import type { KubeObject } from '../../src/api/types.js';
import { coreOf, diffObject } from '../../src/gitops/plan/diff.js';

const models = resourceModels();
const v1 = 'management.service/v1';
const team = (metadata: Record<string, unknown>, spec: Record<string, unknown> = { displayName: 'T' }): KubeObject => ({ apiVersion: v1, kind: 'Team', metadata: { name: 't', ...metadata }, spec });
const live = (more: Record<string, unknown> = {}, spec?: Record<string, unknown>) => team({ uid: 'u1', resourceVersion: '9', creationTimestamp: '2026-01-01T00:00:00Z', ...more }, spec);
const keepAll = { ignore: () => false, replace: false };

describe('the metadata a write holds', () => {
  it("coreOf is the client's metadata and spec, nothing the server sets", () => {
    const obj = live({ labels: { a: 'b' }, finalizers: ['teamkeys/x'], ownerReferences: [{ apiVersion: v1, kind: 'Team', name: 'p', uid: 'u0' }], annotations: { n: 'v' } });
    expect(coreOf(obj)).toEqual({ metadata: { labels: { a: 'b' }, annotations: { n: 'v' }, finalizers: ['teamkeys/x'], ownerReferences: [{ apiVersion: v1, kind: 'Team', name: 'p', uid: 'u0' }] }, spec: { displayName: 'T' } });
    expect(coreOf({ apiVersion: v1, kind: 'Team', metadata: { name: 't' } })).toStrictEqual({ metadata: {} });
  });

  it('a finalizer git declares is added to the live object', () => {
    const d = diffObject(models.teams, team({ finalizers: ['teamkeys/cleanup'] }), live(), keepAll);
    expect(d.patch).toEqual([{ op: 'add', path: '/metadata/finalizers', value: ['teamkeys/cleanup'] }]);
    expect(d.changes.map((c) => [c.path, c.after])).toEqual([['metadata.finalizers', ['teamkeys/cleanup']]]);
  });

  it("a replace writes the whole object and keeps the live finalizers and server fields git does not decide", () => {
    const d = diffObject(models.teams, team({}, { displayName: 'New' }), live({ finalizers: ['teamkeys/x'] }), { ignore: () => false, replace: true });
    expect(d.target.metadata).toMatchObject({ name: 't', uid: 'u1', resourceVersion: '9', creationTimestamp: '2026-01-01T00:00:00Z', finalizers: ['teamkeys/x'] });
    expect(d.target.spec).toEqual({ displayName: 'New' });
    expect(d.patch).toEqual([{ op: 'replace', path: '/spec/displayName', value: 'New' }]);
  });

  it('a finalizer gitops set and git no longer names goes, from the patch and from a replace', () => {
    const gitops = { manager: 'gitops', operation: 'Update' as const, apiVersion: v1, time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1' as const, fieldsV1: { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"teamkeys/x"': {} } }, 'f:spec': { 'f:displayName': {} } } };
    const current = live({ finalizers: ['teamkeys/x'], managedFields: [gitops] });
    expect(diffObject(models.teams, team({}), current, keepAll).patch).toEqual([{ op: 'remove', path: '/metadata/finalizers' }]);
    const d = diffObject(models.teams, team({}), current, { ignore: () => false, replace: true });
    expect(d.target.metadata.finalizers).toBeUndefined();
    expect(d.changes.map((c) => [c.path, c.before, c.after])).toEqual([['metadata.finalizers', ['teamkeys/x'], undefined]]);
  });

  it("status gitops once wrote (a rotation's confirmation) is the server's: neither diffed nor removed", () => {
    const confirm = { manager: 'gitops', operation: 'Update' as const, apiVersion: v1, time: '2026-01-02T00:00:00Z', fieldsType: 'FieldsV1' as const, subresource: 'status', fieldsV1: { 'f:status': { 'f:rotation': { 'f:awaitingConfirmation': {} } } } };
    const current = { ...live({ managedFields: [confirm] }), status: { rotation: { awaitingConfirmation: false } } };
    const d = diffObject(models.teams, team({}), current, keepAll);
    expect([d.patch, d.changes]).toEqual([[], []]);
    expect(d.target.status).toEqual({ rotation: { awaitingConfirmation: false } });
  });
});

describe('what git decides and what it leaves', () => {
  it('an ignored field keeps its live value, whatever git declares for it', () => {
    const ignoreDescription = { ignore: (p: string) => p === 'spec.description', replace: false };
    const d = diffObject(models.teams, team({}, { displayName: 'T', description: 'from git' }), live({}, { displayName: 'T', description: 'by hand' }), ignoreDescription);
    expect([d.patch, d.changes]).toEqual([[], []]);
    expect(d.target.spec).toEqual({ displayName: 'T', description: 'by hand' });
  });

  it('a field that grants access and that git does not hold at all goes whole, not as an empty list; unless it is ignored', () => {
    const byHand = live({}, { displayName: 'T', users: ['mallory'] });
    const d = diffObject(models.teams, team({}), byHand, keepAll);
    expect(d.patch).toEqual([{ op: 'remove', path: '/spec/users' }]);
    expect(d.target.spec).toEqual({ displayName: 'T' });
    expect(d.changes.map((c) => [c.path, c.before, c.after])).toEqual([['spec.users', ['mallory'], undefined]]);
    expect(diffObject(models.teams, team({}), byHand, { ignore: (p) => p === 'spec.users', replace: false }).patch).toEqual([]);
    // An empty list or owner left live (nothing in it to remove) goes too.
    expect(diffObject(models.teams, team({}), live({}, { displayName: 'T', users: [], owner: {} }), keepAll).target.spec).toEqual({ displayName: 'T' });
  });
});

