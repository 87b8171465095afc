/**
 * Who made a drift (src/gitops/plan/attribution.ts), on its functions: which manager last wrote a
 * field, who removed one git holds (from the audit trail when there is one, else from managedFields
 * times), the person and CI job behind a write, and what a drift report says was done.
 */
import { describe, expect, it } from 'vitest';
import { auditJobExtra, type AuditEvent } from '../../src/api/audit-event.js';
import type { ManagedFieldsEntry } from '../../src/api/types.js';
import { attributeFields, ownerOf, removedBy, withPerson } from '../../src/gitops/plan/attribution.js';
import { teamPatch } from './audit-events.js';

const v1 = 'management.service/v1';
const entry = (manager: string | undefined, time: string | undefined, fieldsV1: Record<string, unknown>, more: Partial<ManagedFieldsEntry> = {}): ManagedFieldsEntry => ({
  ...(manager !== undefined ? { manager } : {}),
  operation: 'Update',
  apiVersion: v1,
  ...(time !== undefined ? { time } : {}),
  fieldsType: 'FieldsV1',
  fieldsV1,
  ...more,
});
const spec = (fields: Record<string, unknown>) => ({ 'f:spec': fields });
const event = teamPatch;
const description = ['["f:spec","f:description"]'];
const gitopsAt = (time: string, fields = spec({ 'f:displayName': {} })) => entry('gitops', time, fields);

describe('ownerOf: the manager that last wrote a field', () => {
  it('is the newest entry owning one of the leaves; an entry without a time is older than any with one', () => {
    const entries = [entry('old', '2026-01-01T00:00:00Z', spec({ 'f:description': {} })), entry('untimed', undefined, spec({ 'f:description': {} })), entry('new', '2026-01-02T00:00:00Z', spec({ 'f:description': {} }))];
    expect(ownerOf(entries, description)).toEqual({ manager: 'new', operation: 'Update', time: '2026-01-02T00:00:00Z' });
    expect(ownerOf([...entries].reverse(), description)?.manager).toBe('new');
    expect(ownerOf([entries[1]!, entries[0]!], description)?.manager).toBe('old');
  });

  it('an entry without manager or operation is named by empty strings, and no time is no time', () => {
    expect(ownerOf([{ fieldsType: 'FieldsV1', fieldsV1: spec({ 'f:description': {} }) } as ManagedFieldsEntry], description)).toStrictEqual({ manager: '', operation: '' });
    expect(ownerOf([entry('x', '2026-01-01T00:00:00Z', spec({ 'f:displayName': {} }))], description)).toBeUndefined();
  });
});

describe('removedBy with the audit trail: the write since gitops that removed the field', () => {
  it('reads the trail in resourceVersion order, whatever order it came in: a removal before gitops last wrote is not drift', () => {
    const trail = [event(7, 'kubectl-edit', 'bob', { changed: ['.spec.displayName'] }), event(5, 'gitops', 'system:teamkeys', {}), event(3, 'kubectl-edit', 'alice', { removed: ['.spec.description'] })];
    expect(removedBy(description, [gitopsAt('2026-01-05T00:00:00Z')], trail)).toBeUndefined();
    expect(removedBy(description, [], trail)).toBeUndefined();
    // The same removal after gitops' write is drift, named by its person.
    const after = [event(3, 'gitops', 'system:teamkeys', {}), event(5, 'kubectl-edit', 'alice', { removed: ['.spec.description'] })];
    expect(removedBy(description, [], after)).toMatchObject({ manager: 'kubectl-edit', user: 'alice', operation: 'Update', time: '2026-01-05T00:00:00Z' });
  });

  it('names the newest of several writers that removed it', () => {
    const trail = [event(2, 'gitops', 'system:teamkeys', {}), event(3, 'kubectl-edit', 'alice', { removed: ['.spec.description'] }), event(4, 'kubectl-patch', 'bob', { changed: ['.spec.description'] })];
    expect(removedBy(description, [], trail)).toMatchObject({ manager: 'kubectl-patch', user: 'bob' });
  });

  it("a write to a subresource is not a write of the object's fields", () => {
    const trail = [event(2, 'gitops', 'system:teamkeys', {}), event(3, 'server', 'system:rotation', { removed: ['.spec.description'] }, { objectRef: { apiGroup: 'management.service', apiVersion: v1, resource: 'ownedaccesskeys', name: 't', resourceVersion: '3', subresource: 'rotation' } })];
    expect(removedBy(description, [gitopsAt('2026-01-02T00:00:00Z')], trail)).toBeUndefined();
  });

  it('a removal of the container, or of one item, covers the field; a sibling does not', () => {
    const after = (fields: AuditEvent['fields']) => [event(2, 'gitops', 'system:teamkeys', {}), event(3, 'kubectl-edit', 'alice', fields)];
    expect(removedBy(['["f:spec","f:owner","f:user"]'], [], after({ removed: ['.spec.owner'] }))?.user).toBe('alice');
    expect(removedBy(['["f:spec","f:users","v:\\"a\\""]'], [], after({ removed: ['.spec.users'] }))?.user).toBe('alice');
    expect(removedBy(['["f:spec","f:owner"]'], [], after({ removed: ['.spec.owner.user'] }))?.user).toBe('alice');
    expect(removedBy(['["f:spec","f:users"]'], [], after({ removed: ['.spec.users[="a"]'] }))?.user).toBe('alice');
    expect(removedBy(['["f:spec","f:users","v:\\"a\\""]', '["f:spec","f:users","v:\\"b\\""]'], [], after({ removed: ['.spec.users[="b"]'] }))?.user).toBe('alice');
    expect(removedBy(['["f:spec","f:owner","f:user"]'], [], after({ removed: ['.spec.own'] }))).toBeUndefined();
    expect(removedBy(description, [], after({ added: ['.spec.description'] }))).toBeUndefined();
    expect(removedBy(description, [], after(undefined))).toBeUndefined();
  });

  it("without gitops' write in the trail (it predates it), the writes since gitops' managedFields time count, to the second", () => {
    const entries = [gitopsAt('2026-01-03T00:00:00Z'), gitopsAt('2026-01-01T00:00:00Z'), { ...gitopsAt('2026-01-02T00:00:00Z'), operation: 'Apply' as const }, entry('gitops', '2026-01-05T00:00:00Z', { 'f:status': {} }, { subresource: 'status' }), entry('kubectl-edit', '2026-01-06T00:00:00Z', spec({ 'f:displayName': {} }))];
    // dana removed it in the very second gitops wrote (the trail has milliseconds, managedFields not).
    const dana = event(9, 'kubectl-edit', 'dana', { removed: ['.spec.description'] }, { stageTimestamp: '2026-01-03T00:00:00.500Z' });
    expect(removedBy(description, entries, [dana])).toMatchObject({ user: 'dana', time: '2026-01-03T00:00:00Z' });
    // carl removed it before gitops' last write: git moved on since; erin only changed another field.
    const carl = event(8, 'kubectl-edit', 'carl', { removed: ['.spec.description'] }, { stageTimestamp: '2026-01-02T12:00:00.000Z' });
    const erin = event(10, 'kubectl-edit', 'erin', { changed: ['.spec.displayName'] }, { stageTimestamp: '2026-01-04T00:00:00.000Z' });
    expect(removedBy(description, entries, [carl, erin])).toBeUndefined();
  });

  it("gitops' managedFields entry without a time (kube's time is optional), or none: every write of the trail counts", () => {
    const untimed = entry('gitops', undefined, spec({ 'f:description': {} }));
    const alice = event(4, 'kubectl-edit', 'alice', { removed: ['.spec.description'] });
    expect(removedBy(description, [untimed], [alice])).toMatchObject({ manager: 'kubectl-edit', user: 'alice', time: '2026-01-04T00:00:00Z' });
    // Nor any gitops entry at all: the same.
    expect(removedBy(description, [], [alice])).toMatchObject({ manager: 'kubectl-edit', user: 'alice' });
  });

  it('a trail whose only write since gitops is a create falls back to managedFields times', () => {
    const entries = [gitopsAt('2026-01-01T00:00:00Z'), entry('kubectl-edit', '2026-01-04T00:00:00Z', spec({ 'f:displayName': {} }))];
    const create = event(2, 'kubectl-create', 'carl', { removed: ['.spec.description'] }, { verb: 'create' });
    expect(removedBy(description, entries, [create])).toEqual({ manager: 'kubectl-edit', operation: 'Update', time: '2026-01-04T00:00:00Z' });
  });
});

describe('removedBy without the trail: the latest other write after gitops, by managedFields times', () => {
  const gitops = gitopsAt('2026-01-03T00:00:00Z');
  it.each([
    ['a later write by another manager', [entry('kubectl-edit', '2026-01-04T00:00:00Z', spec({ 'f:displayName': {} }))], 'kubectl-edit'],
    ['the newest of two later writes', [entry('a', '2026-01-04T00:00:00Z', spec({ 'f:x': {} })), entry('b', '2026-01-05T00:00:00Z', spec({ 'f:x': {} })), entry('c', '2026-01-04T12:00:00Z', spec({ 'f:x': {} }))], 'b'],
    ['a later write of spec and status', [entry('kubectl-edit', '2026-01-04T00:00:00Z', { 'f:spec': { 'f:x': {} }, 'f:status': { 'f:y': {} } })], 'kubectl-edit'],
    ['a later write that owns only status (rotation bookkeeping)', [entry('server', '2026-01-04T00:00:00Z', { 'f:status': { 'f:rotation': {} } })], undefined],
    ['a later write of a subresource', [entry('kubectl-edit', '2026-01-04T00:00:00Z', spec({ 'f:x': {} }), { subresource: 'status' })], undefined],
    ['a write in the same second as gitops', [entry('kubectl-edit', '2026-01-03T00:00:00Z', spec({ 'f:x': {} }))], undefined],
    ['an earlier write', [entry('kubectl-edit', '2026-01-02T00:00:00Z', spec({ 'f:x': {} }))], undefined],
    ['a write without a time', [entry('kubectl-edit', undefined, spec({ 'f:x': {} }))], undefined],
  ])('%s', (_label, others, manager) => {
    expect(removedBy(description, [gitops, ...others], undefined)?.manager).toBe(manager);
    expect(removedBy(description, [gitops, ...others], [])?.manager).toBe(manager);
  });

  it('names a manager-less entry "unknown", with its operation and time', () => {
    expect(removedBy(description, [gitops, entry(undefined, '2026-01-04T00:00:00Z', spec({ 'f:x': {} }))], undefined)).toStrictEqual({ manager: 'unknown', operation: 'Update', time: '2026-01-04T00:00:00Z' });
    const bare = { fieldsType: 'FieldsV1', fieldsV1: spec({ 'f:x': {} }), manager: 'm', time: '2026-01-04T00:00:00Z' } as ManagedFieldsEntry;
    expect(removedBy(description, [gitops, bare], undefined)).toStrictEqual({ manager: 'm', operation: '', time: '2026-01-04T00:00:00Z' });
  });

  it('without any gitops write, nobody removed anything gitops applied', () => {
    expect(removedBy(description, [entry('kubectl-edit', '2026-01-04T00:00:00Z', spec({ 'f:x': {} }))], undefined)).toBeUndefined();
    // A gitops entry without a time is older than any other write.
    expect(removedBy(description, [entry('gitops', undefined, spec({})), entry('kubectl-edit', '2026-01-04T00:00:00Z', spec({ 'f:x': {} }))], undefined)?.manager).toBe('kubectl-edit');
  });
});

describe('withPerson and the drift a report tells', () => {
  it("names the person, key and a Federated key's CI job behind a manager's write", () => {
    const e = event(3, 'kubectl-patch', 'olga', { changed: ['.spec.description'] }, { user: { username: 'olga', keyName: 'olga-ci', extra: { [auditJobExtra]: ['acme/app#42'] } } });
    expect(withPerson({ manager: 'kubectl-patch', operation: 'Update' }, description, [e])).toEqual({ manager: 'kubectl-patch', operation: 'Update', user: 'olga', keyName: 'olga-ci', job: 'acme/app#42' });
    expect(withPerson({ manager: 'kubectl-patch', operation: 'Update' }, description, [event(3, 'kubectl-patch', 'olga', {})])).toStrictEqual({ manager: 'kubectl-patch', operation: 'Update', user: 'olga' });
  });

  it('describes a list added where git has none, and a list git holds that someone emptied', () => {
    const byHand = entry('kubectl-edit', '2026-01-04T00:00:00Z', spec({ 'f:users': {} }));
    const [added] = attributeFields([{ path: 'spec.users', before: ['mallory'], liveLeaves: ['["f:spec","f:users"]'], missing: [] }], [byHand], undefined);
    expect(added).toMatchObject({ drift: true, description: 'added `"mallory"` to spec.users', before: ['mallory'] });
    const [emptied] = attributeFields([{ path: 'spec.users', before: [], after: ['carla'], liveLeaves: ['["f:spec","f:users"]'], missing: [] }], [byHand], undefined);
    expect(emptied).toMatchObject({ drift: true, description: 'removed `"carla"` from spec.users' });
    // The whole list removed by hand: git's items are named, from the trail's write that removed it.
    const trail = [event(2, 'gitops', 'system:teamkeys', {}), event(3, 'kubectl-edit', 'olga', { removed: ['.spec.users'] })];
    const [gone] = attributeFields([{ path: 'spec.users', after: ['carla'], liveLeaves: [], missing: ['["f:spec","f:users","v:\\"carla\\""]'] }], [gitopsAt('2026-01-02T00:00:00Z')], trail);
    expect(gone).toMatchObject({ drift: true, description: 'removed `"carla"` from spec.users', lastChangedBy: { user: 'olga' } });
  });
});

describe("withPerson: which of the manager's writes names the person", () => {
  const by = { manager: 'kubectl-patch', operation: 'Update' };
  it("the newest write by that manager touching the field, not another manager's, not an unrelated one", () => {
    const trail = [
      event(2, 'kubectl-patch', 'olga', { changed: ['.spec.description'] }),
      event(4, 'kubectl-patch', 'admin', { changed: ['.spec.displayName'] }),
      event(3, 'kubectl-edit', 'bob', { changed: ['.spec.description'] }),
    ];
    expect(withPerson(by, description, trail).user).toBe('olga');
  });

  it('without a write touching the field, the newest write by that manager', () => {
    const trail = [event(2, 'kubectl-patch', 'olga', {}), event(4, 'kubectl-patch', 'admin', {}), event(3, 'kubectl-patch', 'pat', {}), event(5, 'kubectl-edit', 'bob', {})];
    expect(withPerson(by, description, trail).user).toBe('admin');
  });

  it('a list change is told item by item, and a backtick in a value cannot end the quoting', () => {
    const byHand = entry('kubectl-edit', '2026-01-04T00:00:00Z', spec({ 'f:users': {} }));
    const [c] = attributeFields([{ path: 'spec.users', before: ['carla', 'a`b', 'mallory'], after: ['carla'], liveLeaves: ['["f:spec","f:users"]'], missing: [] }], [byHand], undefined);
    expect(c!.description).toBe('added `"a\\u0060b"`, `"mallory"` to spec.users');
  });
});

describe('attributeFields: a change from git is not drift, and says only what is known', () => {
  const displayName = ['["f:spec","f:displayName"]'];
  const gitops = gitopsAt('2026-01-01T00:00:00Z');
  const later = entry('kubectl-edit', '2026-01-04T00:00:00Z', spec({ 'f:description': {} }));

  it('a field gitops last wrote, changed in git, names gitops and nothing more, even after another write elsewhere', () => {
    const trail = [event(1, 'gitops', 'system:teamkeys', { changed: ['.spec.displayName'] }), event(4, 'kubectl-edit', 'olga', { changed: ['.spec.description'] })];
    for (const history of [undefined, trail]) {
      expect(attributeFields([{ path: 'spec.displayName', before: 'Old', after: 'New', liveLeaves: displayName, missing: [] }], [gitops, later], history)).toStrictEqual([
        { path: 'spec.displayName', drift: false, before: 'Old', after: 'New', lastChangedBy: { manager: 'gitops', operation: 'Update', time: '2026-01-01T00:00:00Z' } },
      ]);
    }
  });

  it('a field git drops has no after', () => {
    const owned = gitopsAt('2026-01-01T00:00:00Z', spec({ 'f:description': {} }));
    expect(attributeFields([{ path: 'spec.description', before: 'x', liveLeaves: description, missing: [] }], [owned], undefined)).toStrictEqual([
      { path: 'spec.description', drift: false, before: 'x', lastChangedBy: { manager: 'gitops', operation: 'Update', time: '2026-01-01T00:00:00Z' } },
    ]);
  });

  it('a field git adds has no writer and no before', () => {
    expect(attributeFields([{ path: 'spec.description', after: 'd', liveLeaves: [], missing: description }], [gitops], undefined)).toStrictEqual([{ path: 'spec.description', drift: false, after: 'd' }]);
  });

  it.each([
    ['a value changed by hand', 'By hand', 'From git', 'changed spec.displayName'],
    ['items added and removed', ['a', 'x'], ['a', 'y'], 'added `"x"` to spec.displayName and removed `"y"` from spec.displayName'],
    ['a list reordered', ['b', 'a'], ['a', 'b'], 'changed spec.displayName'],
  ])('drift tells what the other writer did: %s', (_label, before, after, text) => {
    const hand = entry('kubectl-edit', '2026-01-04T00:00:00Z', spec({ 'f:displayName': {} }));
    expect(attributeFields([{ path: 'spec.displayName', before, after, liveLeaves: displayName, missing: [] }], [gitops, hand], undefined)[0]!.description).toBe(text);
  });
});

