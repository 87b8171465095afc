import { describe, expect, it } from 'vitest';
import {
  dottedPath,
  fieldPath,
  fieldSetMember,
  formatElement,
  hasPrefix,
  innermost,
  isInside,
  kubePathString,
  parseElement,
  parseFieldPath,
  samePath,
  type FieldPath,
} from '../../src/api/fields/field-path.js';
import { leavesOf } from '../../src/api/fields/fieldset.js';
import { resourceModels } from '../../src/api/model.js';

const member = (...keys: string[]) => JSON.stringify(keys);
const path = (...keys: string[]) => parseFieldPath(member(...keys));

describe('a field path from FieldsV1 keys', () => {
  it.each([
    ['f:spec', { kind: 'field', name: 'spec' }],
    ['f:app.kubernetes.io/name', { kind: 'field', name: 'app.kubernetes.io/name' }],
    ['f:', { kind: 'field', name: '' }],
    ['k:{"name":"admin"}', { kind: 'key', json: '{"name":"admin"}' }],
    ['v:"ana"', { kind: 'value', json: '"ana"' }],
    ['v:{"b":1,"a":[2]}', { kind: 'value', json: '{"b":1,"a":[2]}' }],
    ['i:0', { kind: 'index', index: 0 }],
    ['i:12', { kind: 'index', index: 12 }],
    ['.', { kind: 'self' }],
  ])('%s parses and prints back', (key, element) => {
    expect(parseElement(key)).toEqual(element);
    expect(formatElement(parseElement(key))).toBe(key);
  });

  it.each(['x:y', 'spec', '', 'i:', 'i:01', 'i:-1', 'i:1.5'])('%j is not a FieldsV1 key', (key) => {
    expect(() => parseElement(key)).toThrow(/not a FieldsV1 key/);
  });

  it.each([
    [['f:spec', 'f:users', 'v:"ana"']],
    [['f:spec', 'f:clusterRoles', 'k:{"name":"admin"}', '.']],
    [['f:metadata', 'f:labels', 'f:a.b"c[d]\\e', '.']],
    [['f:spec', 'f:list', 'i:3', 'f:x']],
    [['v:"quote \\" and ] bracket"']],
    [[]],
  ])('%j round-trips as a field set member', (keys) => {
    const m = JSON.stringify(keys);
    expect(fieldSetMember(parseFieldPath(m))).toBe(m);
  });

  it('every member leavesOf makes round-trips', () => {
    const schema = resourceModels().teams.schema;
    const obj = {
      metadata: { labels: { 'app.kubernetes.io/name': 'x', 'q"uote': 'y' }, annotations: { 'a[0]': 'z' } },
      spec: { displayName: 'T', users: ['ana', 'b"o'], clusterRoles: [{ name: 'teams-admin' }], access: [{ verbs: ['get'], users: ['x'] }] },
    };
    const members = [...leavesOf(schema, obj).keys()];
    expect(members.length).toBeGreaterThan(10);
    for (const m of members) expect(fieldSetMember(parseFieldPath(m))).toBe(m);
  });
});

describe('reading a path', () => {
  it.each([
    [path('f:spec', 'f:users', 'v:"ana"'), 'spec.users', '.spec.users[="ana"]'],
    [path('f:spec', 'f:users', '.'), 'spec.users', '.spec.users'],
    [path('f:spec', 'f:clusterRoles', 'k:{"name":"admin"}', 'f:name'), 'spec.clusterRoles', '.spec.clusterRoles[name="admin"].name'],
    [path('f:spec', 'f:list', 'i:2', 'f:x'), 'spec.list', '.spec.list[2].x'],
    [path('f:metadata', 'f:labels', 'f:app.kubernetes.io/name'), 'metadata.labels.app.kubernetes.io/name', '.metadata.labels.app.kubernetes.io/name'],
    [path('f:metadata', 'f:annotations', 'f:say "[x]"'), 'metadata.annotations.say "[x]"', '.metadata.annotations.say "[x]"'],
    [path(), '', ''],
  ])('%j reads as %s in reports and %s as kube prints it', (p, dotted, kube) => {
    expect(dottedPath(p)).toBe(dotted);
    expect(kubePathString(p)).toBe(kube);
  });

  it('a map-list key prints its fields in the order FieldsV1 holds them', () => {
    expect(kubePathString(path('f:spec', 'f:grants', 'k:{"kind":"Team","name":"x"}'))).toBe('.spec.grants[kind="Team",name="x"]');
  });
});

describe('comparing paths', () => {
  const users = path('f:spec', 'f:users');
  it('a prefix is compared element by element, not by text', () => {
    expect(hasPrefix(path('f:spec', 'f:users', 'v:"a"'), users)).toBe(true);
    expect(hasPrefix(users, users)).toBe(true);
    expect(hasPrefix(path('f:spec', 'f:usersX'), users)).toBe(false);
    expect(hasPrefix(path('f:spec'), users)).toBe(false);
    expect(hasPrefix(path('f:spec.users'), fieldPath('spec'))).toBe(false);
    expect(hasPrefix(path('f:spec', 'v:"a"'), path('f:spec', 'k:"a"'))).toBe(false);
    expect(hasPrefix(users, [])).toBe(true);
  });

  it('what lies inside a container', () => {
    const marker = path('f:spec', 'f:users', '.');
    expect(isInside(path('f:spec', 'f:users', 'v:"a"'), marker)).toBe(true);
    expect(isInside(marker, marker)).toBe(false);
    expect(isInside(marker, users)).toBe(true);
    expect(isInside(users, users)).toBe(false);
    expect(isInside(path('f:spec', 'f:users', 'v:"a"'), users)).toBe(true);
    expect(isInside(path('f:spec', 'f:usersX', 'v:"a"'), marker)).toBe(false);
    expect(isInside(path('f:spec', 'f:owner'), path('f:spec', 'f:owner', 'f:user'))).toBe(false);
  });

  it('samePath', () => {
    expect(samePath(fieldPath('spec', 'users'), users)).toBe(true);
    expect(samePath(users, path('f:spec', 'f:users', '.'))).toBe(false);
  });

  it('innermost keeps the paths nothing else lies inside, as a pairwise isInside would', () => {
    const all: FieldPath[] = [
      path('f:spec', 'f:users', '.'),
      path('f:spec', 'f:users', 'v:"a"'),
      path('f:spec', 'f:clusterRoles', '.'),
      path('f:spec', 'f:clusterRoles', 'k:{"name":"x"}', '.'),
      path('f:spec', 'f:clusterRoles', 'k:{"name":"x"}', 'f:name'),
      path('f:metadata', 'f:labels', '.'),
      path('f:spec', 'f:owner'),
      path('f:spec', 'f:displayName'),
    ];
    const pairwise = all.filter((p) => !all.some((q) => q !== p && isInside(q, p)));
    expect(innermost(all)).toEqual(pairwise);
    expect(innermost(all).map(kubePathString)).toEqual([
      '.spec.users[="a"]',
      '.spec.clusterRoles[name="x"].name',
      '.metadata.labels',
      '.spec.owner',
      '.spec.displayName',
    ]);
    expect(innermost([])).toEqual([]);
  });
});
