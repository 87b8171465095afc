/**
 * The diff rules, table-driven on the pure planner: access fields are git's whole value, other
 * fields keep field ownership, replace means equal, a removal is drift when a writer removed it,
 * and drift is named from the audit trail when there is one.
 */
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/api/audit-event.js';
import { resourceModels } from '../../src/api/model.js';
import type { KubeObject, ManagedFieldsEntry } from '../../src/api/types.js';
import { planObject, type PlanOptions } from '../../src/gitops/plan/plan.js';
import type { DesiredObject } from '../../src/gitops/validate.js';
import { teamPatch } from './audit-events.js';

const models = resourceModels();
const v1 = 'management.service/v1';
const source = { 'gitops.management.service/source': 's' };
const manifest = { file: 'x.yaml', line: 1, column: 1, object: {}, locate: () => ({ file: 'x.yaml', line: 1, column: 1 }) };
const opts: PlanOptions = { sourceId: 's', prune: false, allowEmpty: false, maxPrune: 10 };
const entry = (manager: string, time: string, fields: Record<string, unknown>): ManagedFieldsEntry => ({ manager, operation: 'Update', apiVersion: v1, time, fieldsType: 'FieldsV1', fieldsV1: fields });
const want = (spec: object, metadata: object = {}): DesiredObject => ({ plural: 'teams', obj: { apiVersion: v1, kind: 'Team', metadata: { name: 't', ...metadata }, spec }, manifest });
const live = (spec: object, managedFields: ManagedFieldsEntry[], metadata: object = {}): KubeObject => ({
  apiVersion: v1,
  kind: 'Team',
  metadata: { name: 't', uid: 'u1', resourceVersion: '9', annotations: source, managedFields, ...metadata },
  spec,
});
const gitopsOwns = (fields: Record<string, unknown>) =>
  entry('gitops', '2026-01-01T00:00:00Z', { 'f:metadata': { 'f:annotations': { '.': {}, 'f:gitops.management.service/source': {} } }, ...(Object.keys(fields).length ? { 'f:spec': fields } : {}) });
// Each writer's key is named after them, so a test can tell the key was named too.
const event = (rv: number, manager: string, username: string, fields?: AuditEvent['fields']): AuditEvent =>
  teamPatch(rv, manager, username, fields, { user: { username, keyName: `${username}-key` } });

describe('the diff rules', () => {
  it.each([
    ['a member added by hand to spec.users (access field)', { users: ['carla'] }, { users: ['carla', 'mallory'] }, { 'f:users': { 'v:"mallory"': {} } }, 'update', true, 'added `"mallory"` to spec.users'],
    ['a role added by hand to spec.clusterRoles', { clusterRoles: [{ name: 'v' }] }, { clusterRoles: [{ name: 'v' }, { name: 'admin' }] }, { 'f:clusterRoles': { 'k:{"name":"admin"}': { '.': {}, 'f:name': {} } } }, 'update', true, 'added `{"name":"admin"}` to spec.clusterRoles'],
    ['an owner set by hand, git has none', {}, { owner: { user: 'eve' } }, { 'f:owner': { 'f:user': {} } }, 'update', true, 'added spec.owner.user'],
    // A team created by hand under a name git declares, adopted by git's apply: its creator's break-glass entry goes (found by a review).
    ['a break-glass user set by hand in spec.accessRequests, git has none', {}, { accessRequests: { breakGlass: { users: ['mallory'] } } }, { 'f:accessRequests': { 'f:breakGlass': { 'f:users': { 'v:"mallory"': {} } } } }, 'update', true, 'added `"mallory"` to spec.accessRequests.breakGlass.users'],
    ['a username set by hand (grants nothing)', {}, { username: 'bot' }, { 'f:username': {} }, 'unchanged', false, undefined],
  ])('%s', (_label, git, current, hand, type, drift, description) => {
    const owned = gitopsOwns({});
    const other = entry('kubectl-patch', '2026-01-02T00:00:00Z', { 'f:spec': hand });
    const a = planObject(models.teams, want(git), live({ ...git, ...current }, [owned, other]), opts);
    expect([a.type, a.drift]).toEqual([type, drift]);
    if (description) expect(a.changes[0]).toMatchObject({ description, lastChangedBy: { manager: 'kubectl-patch' } });
    if (type === 'update') expect(a.patch!.slice(1)).not.toContainEqual(expect.objectContaining({ path: '/metadata/labels' }));
  });

  it('replace removes every label, annotation and spec field git does not hold, and lists each', () => {
    const git = want({ displayName: 'T' }, { annotations: { 'gitops.management.service/sync-strategy': 'replace' } });
    const current = live({ displayName: 'T', description: 'by hand' }, [gitopsOwns({ 'f:displayName': {} })], { labels: { bot: 'yes' }, annotations: { ...source, note: 'x' } });
    const a = planObject(models.teams, git, current, opts);
    expect(a.type).toBe('replace');
    expect(a.body!.spec).toEqual({ displayName: 'T' });
    expect(a.body!.metadata.labels).toBeUndefined();
    expect(a.body!.metadata.annotations).toEqual({ ...source, 'gitops.management.service/sync-strategy': 'replace' });
    expect(a.changes.map((c) => [c.path, c.before, c.after])).toEqual([
      ['metadata.annotations.gitops.management.service/sync-strategy', undefined, 'replace'],
      ['metadata.annotations.note', 'x', undefined],
      ['metadata.labels.bot', 'yes', undefined],
      ['spec.description', 'by hand', undefined],
    ]);
  });

  it.each([
    ['the trail shows who removed it', [event(2, 'gitops', 'system:teamkeys'), event(3, 'kubectl-patch', 'olga', { removed: ['.spec.description'] })], true, 'olga'],
    ['the trail shows writes since gitops, none removing it: git added it', [event(2, 'gitops', 'system:teamkeys'), event(3, 'kubectl-label', 'bob', { added: ['.metadata.labels.x'] })], false, undefined],
    ['no trail, nobody wrote after gitops: git added it', undefined, false, undefined],
  ])('a field git holds and the live object lacks: %s', (_label, history, drift, user) => {
    const a = planObject(models.teams, want({ description: 'd', displayName: 'T' }), live({ displayName: 'T' }, [gitopsOwns({ 'f:displayName': {} })]), opts, history);
    expect(a.changes).toEqual([expect.objectContaining({ path: 'spec.description', after: 'd', drift })]);
    if (user) expect(a.changes[0]!.lastChangedBy).toMatchObject({ user, keyName: `${user}-key`, manager: 'kubectl-patch' });
    if (drift) expect(a.changes[0]!.description).toBe('removed spec.description');
  });

  it('without the trail, a removal after another manager wrote the object is drift, named by that manager', () => {
    const later = entry('kubectl-patch', '2026-01-05T00:00:00Z', { 'f:spec': { 'f:displayName': {} } });
    const a = planObject(models.teams, want({ description: 'd', displayName: 'T' }), live({ displayName: 'T' }, [gitopsOwns({}), later]), opts);
    expect(a.changes.find((c) => c.path === 'spec.description')).toMatchObject({ drift: true, lastChangedBy: { manager: 'kubectl-patch', time: '2026-01-05T00:00:00Z' } });
  });

  it('a field git stops naming but another manager also holds is left alone; one only gitops held goes', () => {
    const co = entry('kubectl-patch', '2026-01-02T00:00:00Z', { 'f:spec': { 'f:description': {} } });
    const current = live({ displayName: 'T', description: 'both', username: 'mine' }, [gitopsOwns({ 'f:displayName': {}, 'f:description': {}, 'f:username': {} }), co]);
    const a = planObject(models.teams, want({ displayName: 'T' }), current, opts);
    expect(a.type).toBe('update');
    expect(a.changes.map((c) => [c.path, c.before, c.after])).toEqual([['spec.username', 'mine', undefined]]);
  });

  it('a map git stops naming keeps what another manager applied in it (an Apply entry names no node for the map)', () => {
    const gitops = entry('gitops', '2026-01-01T00:00:00Z', { 'f:metadata': { 'f:annotations': { '.': {}, 'f:gitops.management.service/source': {} }, 'f:labels': { '.': {}, 'f:tier': {} } }, 'f:spec': { 'f:displayName': {} } });
    const bot: ManagedFieldsEntry = { ...entry('bot', '2026-01-02T00:00:00Z', { 'f:metadata': { 'f:labels': { 'f:owner': {} } } }), operation: 'Apply' };
    const a = planObject(models.teams, want({ displayName: 'T' }), live({ displayName: 'T' }, [gitops, bot], { labels: { tier: 'one', owner: 'bot' } }), opts);
    expect(a.changes.map((c) => [c.path, c.before, c.after])).toEqual([['metadata.labels.tier', 'one', undefined]]);
  });

  it.each([
    ['another manager wrote it after gitops: drift, named by that manager', '2026-01-01T00:00:00Z', '2026-01-03T00:00:00Z', true, 'kubectl-patch'],
    ['gitops wrote it after the other manager: git changed it, not drift', '2026-01-03T00:00:00Z', '2026-01-01T00:00:00Z', false, 'gitops'],
  ])('a field gitops co-owns with another manager: %s', (_label, gitopsTime, otherTime, drift, manager) => {
    const gitops = { ...gitopsOwns({ 'f:displayName': {} }), time: gitopsTime };
    const other = entry('kubectl-patch', otherTime, { 'f:spec': { 'f:displayName': {} } });
    const a = planObject(models.teams, want({ displayName: 'From git' }), live({ displayName: 'Live' }, [gitops, other]), opts);
    expect(a.changes).toEqual([expect.objectContaining({ path: 'spec.displayName', before: 'Live', after: 'From git', drift, lastChangedBy: expect.objectContaining({ manager }) })]);
  });

  it('the person behind an added member is the write that added it, not the latest by that manager', () => {
    const other = entry('kubectl-patch', '2026-01-04T00:00:00Z', { 'f:spec': { 'f:users': { 'v:"mallory"': {} } } });
    const history = [event(2, 'kubectl-patch', 'olga', { added: ['.spec.users[="mallory"]'] }), event(3, 'kubectl-patch', 'admin', { changed: ['.spec.displayName'] })];
    const a = planObject(models.teams, want({ users: ['carla'] }), live({ users: ['carla', 'mallory'] }, [gitopsOwns({ 'f:users': { '.': {}, 'v:"carla"': {} } }), other]), opts, history);
    expect(a.changes[0]!.lastChangedBy).toMatchObject({ manager: 'kubectl-patch', user: 'olga', keyName: 'olga-key' });
  });
});
