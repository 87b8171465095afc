import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fromFieldsV1, leafPathsOf, leavesOf, pathString, pathsOf, toFieldsV1 } from '../../src/api/fields/fieldset.js';
import { recordApply, recordUpdate, type Manager } from '../../src/api/fields/managed.js';
import { mergeApplied } from '../../src/api/fields/merge.js';
import { resourceModels } from '../../src/api/model.js';
import type { ManagedFieldsEntry } from '../../src/api/types.js';

const schema = resourceModels().teams.schema;
const v1 = 'management.service/v1';
const team = (spec: Record<string, unknown>, labels?: Record<string, string>) => ({
  apiVersion: v1,
  kind: 'Team',
  metadata: { name: 't', uid: 'u', resourceVersion: '3', ...(labels ? { labels } : {}) },
  spec,
});
const upd = (name: string): Manager => ({ name, operation: 'Update' });
const apl = (name: string): Manager => ({ name, operation: 'Apply' });
const fieldsOf = (entries: ManagedFieldsEntry[], manager: string) => entries.find((e) => e.manager === manager)?.fieldsV1;

describe('FieldsV1 from an object and its schema', () => {
  it('records structs as f:, sets as v:, map lists as k:, maps and list items with ".", atomic lists whole', () => {
    const obj = team(
      {
        displayName: 'T',
        owner: { user: 'olga' },
        users: ['ana', 'bo'],
        clusterRoles: [{ name: 'teams-admin' }],
        access: [{ verbs: ['get'], users: ['x'] }],
      },
      { app: 'x' },
    );
    expect(toFieldsV1(pathsOf(leavesOf(schema, obj)))).toEqual({
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': {
        'f:access': {},
        'f:clusterRoles': { '.': {}, 'k:{"name":"teams-admin"}': { '.': {}, 'f:name': {} } },
        'f:displayName': {},
        'f:owner': { 'f:user': {} },
        'f:users': { '.': {}, 'v:"ana"': {}, 'v:"bo"': {} },
      },
    });
  });

  it('round-trips through the FieldsV1 tree', () => {
    const set = pathsOf(leavesOf(schema, team({ users: ['a'], clusterRoles: [{ name: 'r' }] }, { k: 'v' })));
    expect(fromFieldsV1(toFieldsV1(set))).toEqual(set);
  });

  it.each([
    [['f:spec', 'f:displayName'], '.spec.displayName'],
    [['f:spec', 'f:users', 'v:"ana"'], '.spec.users[="ana"]'],
    [['f:spec', 'f:clusterRoles', 'k:{"name":"admin"}', 'f:name'], '.spec.clusterRoles[name="admin"].name'],
    [['f:metadata', 'f:labels', 'f:app'], '.metadata.labels.app'],
  ])('path %j prints as %s', (path, text) => {
    expect(pathString(JSON.stringify(path))).toBe(text);
  });
  it('the paths alone (a create, sets of paths) are the paths of the leaves, in the same order, for any object', () => {
    const models = resourceModels();
    const name = fc.constantFrom('ana', 'bo', 'x', '', 'team:a', 'ü"\\');
    const value: fc.Arbitrary<unknown> = fc.oneof(name, fc.integer(), fc.boolean(), fc.constant(null), fc.array(name, { maxLength: 3 }), fc.dictionary(name, name, { maxKeys: 2 }));
    // Fields of the kinds' schemas (sets, map lists, atomic lists, structs, maps), others unknown to them, and wrong shapes.
    const spec = fc.record(
      {
        displayName: value,
        users: fc.oneof(fc.array(name, { maxLength: 4 }), value),
        groups: fc.array(name, { maxLength: 3 }),
        clusterRoles: fc.oneof(fc.array(fc.record({ name, extra: value }, { requiredKeys: ['name'] }), { maxLength: 3 }), value),
        access: fc.array(fc.record({ verbs: fc.array(name, { maxLength: 2 }), users: fc.array(name, { maxLength: 2 }) }), { maxLength: 2 }),
        owner: fc.oneof(fc.record({ user: name }), value),
        user: name,
        team: name,
        scope: fc.record({ teams: fc.array(name, { maxLength: 2 }) }, { requiredKeys: [] }),
        unknown: value,
      },
      { requiredKeys: [] },
    );
    const object = fc.record({
      metadata: fc.record({ name, labels: fc.dictionary(name, name, { maxKeys: 3 }), annotations: fc.dictionary(name, name, { maxKeys: 2 }), finalizers: fc.array(name, { maxLength: 2 }) }, { requiredKeys: ['name'] }),
      spec,
      status: fc.option(fc.record({ phase: name, lastActivity: name }, { requiredKeys: [] }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.constantFrom(...Object.values(models)), object, (model, obj) => {
        const body = obj as unknown as Record<string, unknown>;
        expect([...leafPathsOf(model.schema, body)]).toEqual([...leavesOf(model.schema, body).keys()]);
      }),
      { numRuns: 400 },
    );
  });
});

describe('ownership on Update', () => {
  const created = team({ displayName: 'T', users: ['ana', 'bo'], description: 'd' });
  const byA = recordUpdate(schema, undefined, created, undefined, upd('alice'), v1, 't1');

  it('the creator owns every field it set', () => {
    expect(byA).toHaveLength(1);
    expect(byA[0]).toMatchObject({ manager: 'alice', operation: 'Update', apiVersion: v1, time: 't1', fieldsType: 'FieldsV1' });
    expect(byA[0]!.fieldsV1).toEqual({ 'f:spec': { 'f:description': {}, 'f:displayName': {}, 'f:users': { '.': {}, 'v:"ana"': {}, 'v:"bo"': {} } } });
  });

  it('a change by B takes only the fields B changed; A keeps the rest and its time', () => {
    const next = team({ displayName: 'B was here', users: ['ana', 'bo', 'cy'], description: 'd' });
    const entries = recordUpdate(schema, created, next, byA, upd('bob'), v1, 't2');
    expect(fieldsOf(entries, 'bob')).toEqual({ 'f:spec': { 'f:displayName': {}, 'f:users': { 'v:"cy"': {} } } });
    expect(fieldsOf(entries, 'alice')).toEqual({ 'f:spec': { 'f:description': {}, 'f:users': { '.': {}, 'v:"ana"': {}, 'v:"bo"': {} } } });
    expect(entries.find((e) => e.manager === 'alice')!.time).toBe('t1');
    expect(entries.find((e) => e.manager === 'bob')!.time).toBe('t2');

    // C removes the users list: ownership of it goes from everyone.
    const removed = team({ displayName: 'B was here', description: 'd' });
    const afterC = recordUpdate(schema, next, removed, entries, upd('carol'), v1, 't3');
    expect(fieldsOf(afterC, 'alice')).toEqual({ 'f:spec': { 'f:description': {} } });
    expect(fieldsOf(afterC, 'bob')).toEqual({ 'f:spec': { 'f:displayName': {} } });
    // Carol only removed; a manager that changed no remaining field gets no entry.
    expect(afterC.map((e) => e.manager)).toEqual(['alice', 'bob']);
  });

  it('an update that changes nothing changes no entry', () => {
    expect(recordUpdate(schema, created, created, byA, upd('bob'), v1, 't9')).toEqual(byA);
  });

  it('more than 10 Update managers fold the oldest into ancient-changes', () => {
    let obj = created;
    let entries = byA;
    for (let i = 0; i < 12; i++) {
      // Each manager adds a label of its own, so each keeps something.
      const next = team(obj.spec, { ...(obj.metadata as { labels?: Record<string, string> }).labels, [`m${i}`]: 'x' });
      entries = recordUpdate(schema, obj, next, entries, upd(`m${String(i).padStart(2, '0')}`), v1, `t${String(i + 10).padStart(2, '0')}`);
      obj = next;
    }
    const names = entries.map((e) => e.manager);
    expect(entries.filter((e) => e.operation === 'Update' && e.manager !== 'ancient-changes').length).toBeLessThanOrEqual(10);
    expect(names).toContain('ancient-changes');
    // As kube's capManagers: 10 Update entries in all, ancient-changes holding the 4 oldest.
    expect(entries).toHaveLength(10);
    const ancient = entries.find((e) => e.manager === 'ancient-changes')!;
    expect(Object.keys((ancient.fieldsV1 as { 'f:metadata': { 'f:labels': object } })['f:metadata']['f:labels'])).toEqual(['.', 'f:m0', 'f:m1', 'f:m2']);
    expect(ancient.fieldsV1).toHaveProperty(['f:spec', 'f:description']); // alice's
  });
});

describe('ownership on server-side apply', () => {
  const live = team({ displayName: 'T', users: ['ana'], description: 'd' });
  const byA = recordUpdate(schema, undefined, live, undefined, upd('kubectl-edit'), v1, 't1');

  it('a different value for a field another manager owns is a conflict naming field and manager', () => {
    const config = team({ displayName: 'Mine' });
    const r = recordApply(schema, live, config, mergeApplied(schema, live, config) as Record<string, unknown>, byA, apl('gitops'), false, v1, 't2');
    expect(r.conflicts.map((c) => [c.manager.manager, pathString(c.path)])).toEqual([['kubectl-edit', '.spec.displayName']]);
  });

  it('the same value is shared ownership, not a conflict', () => {
    const config = team({ displayName: 'T' });
    const r = recordApply(schema, live, config, mergeApplied(schema, live, config) as Record<string, unknown>, byA, apl('gitops'), false, v1, 't2');
    expect(r.conflicts).toEqual([]);
    expect(fieldsOf(r.managedFields, 'gitops')).toEqual({ 'f:spec': { 'f:displayName': {} } });
    expect(fieldsOf(r.managedFields, 'kubectl-edit')).toMatchObject({ 'f:spec': { 'f:displayName': {} } });
  });

  it('force takes the field over', () => {
    const config = team({ displayName: 'Mine' });
    const r = recordApply(schema, live, config, mergeApplied(schema, live, config) as Record<string, unknown>, byA, apl('gitops'), true, v1, 't2');
    expect(r.conflicts).toEqual([]);
    expect((r.object.spec as { displayName: string }).displayName).toBe('Mine');
    expect(fieldsOf(r.managedFields, 'kubectl-edit')).toEqual({ 'f:spec': { 'f:description': {}, 'f:users': { '.': {}, 'v:"ana"': {} } } });
  });

  it('fields the applier stops applying go, unless another manager owns them', () => {
    const first = team({ users: ['x', 'y'], clusterRoles: [{ name: 'a' }, { name: 'b' }] });
    const start = recordApply(schema, team({}), first, first, undefined, apl('gitops'), false, v1, 't1');
    const second = team({ users: ['x'], clusterRoles: [{ name: 'a' }] });
    const r = recordApply(schema, start.object, second, mergeApplied(schema, start.object, second) as Record<string, unknown>, start.managedFields, apl('gitops'), false, v1, 't2');
    expect(r.object.spec).toEqual({ users: ['x'], clusterRoles: [{ name: 'a' }] });
    // Another manager that also set "y" keeps it alive.
    const shared = recordUpdate(schema, start.object, start.object, start.managedFields, upd('other'), v1, 't1');
    const withOther = [...shared, { manager: 'other', operation: 'Update' as const, apiVersion: v1, time: 't1', fieldsType: 'FieldsV1' as const, fieldsV1: { 'f:spec': { 'f:users': { 'v:"y"': {} } } } }];
    const kept = recordApply(schema, start.object, second, mergeApplied(schema, start.object, second) as Record<string, unknown>, withOther, apl('gitops'), false, v1, 't2');
    expect((kept.object.spec as { users: string[] }).users).toEqual(['x', 'y']);
  });
});

describe('entries kept as stored', () => {
  it("another manager's entry a write leaves whole is kept as stored; the writer's, changed to as many fields, is written again", () => {
    // a owns labels w, x and y (applied: stored as three paths), b owns spec.displayName and users (update).
    const live = team({ displayName: 'T', users: ['ana'] }, { w: '1', x: '1', y: '1' });
    const byA = recordApply(schema, team({}), team({}, { w: '1', x: '1', y: '1' }), live, [], apl('a'), false, v1, 't1').managedFields;
    const both = recordUpdate(schema, team({}, { w: '1', x: '1', y: '1' }), live, byA, upd('b'), v1, 't2');
    // a applies labels y and z: three paths again (the labels map's own, y, z), other ones.
    const config = team({}, { y: '1', z: '1' });
    const r = recordApply(schema, live, config, mergeApplied(schema, live, config) as Record<string, unknown>, both, apl('a'), false, v1, 't3');
    expect(fieldsOf(r.managedFields, 'a')).toEqual({ 'f:metadata': { 'f:labels': { 'f:y': {}, 'f:z': {} } } });
    // b's entry is the stored one, not a copy encoded again.
    expect(fieldsOf(r.managedFields, 'b')).toBe(fieldsOf(both, 'b'));
    // b loses a field: its entry is encoded again, without it.
    const next = team({ users: ['ana'] }, { y: '1', z: '1' });
    const dropped = recordUpdate(schema, r.object, next, r.managedFields, upd('c'), v1, 't4');
    expect(fieldsOf(dropped, 'b')).toEqual({ 'f:spec': { 'f:users': { '.': {}, 'v:"ana"': {} } } });
  });
});
