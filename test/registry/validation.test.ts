import { describe, expect, it } from 'vitest';
import { accessKey, newRegistry, statusOf, team } from './helpers.js';

type Case = [label: string, plural: 'teams' | 'ownedaccesskeys', body: unknown, field: string, reason: string, message?: string];

const user = { user: 'ana' };
const longName = 'a'.repeat(254);

const cases: Case[] = [
  ['an upper-case name', 'teams', team('Platform'), 'metadata.name', 'FieldValueInvalid', 'a lowercase RFC 1123 subdomain must consist of'],
  ['a name over 253 characters', 'teams', team(longName), 'metadata.name', 'FieldValueInvalid', 'must be no more than 253 characters'],
  ['no name and no generateName', 'teams', { metadata: {} }, 'metadata.name', 'FieldValueRequired', 'name or generateName is required'],
  ['a label key with a space', 'teams', team('a', {}, { labels: { 'bad key': 'v' } }), 'metadata.labels', 'FieldValueInvalid', 'name part must consist of'],
  ['a label value over 63 characters', 'teams', team('a', {}, { labels: { k: 'v'.repeat(64) } }), 'metadata.labels', 'FieldValueInvalid', 'must be no more than 63 characters'],
  ['a label value that is not a string', 'teams', team('a', {}, { labels: { k: 5 } }), 'metadata.labels[k]', 'FieldValueTypeInvalid', 'must be of type string'],
  ['an annotation key with two slashes', 'teams', team('a', {}, { annotations: { 'a/b/c': 'v' } }), 'metadata.annotations', 'FieldValueInvalid', 'a qualified name must consist of'],
  ['annotations over 256 KiB', 'teams', team('a', {}, { annotations: { big: 'x'.repeat(262_144) } }), 'metadata.annotations', 'FieldValueTooLong', 'may not be more than 262144 bytes'],
  ['a finalizer that is not a qualified name', 'teams', team('a', {}, { finalizers: ['not valid!'] }), 'metadata.finalizers[0]', 'FieldValueInvalid'],
  ['a duplicate finalizer', 'teams', team('a', {}, { finalizers: ['example.com/f', 'example.com/f'] }), 'metadata.finalizers[1]', 'FieldValueDuplicate'],
  [
    'two controller owner references',
    'teams',
    team('a', {}, {
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Team', name: 'x', uid: '1', controller: true },
        { apiVersion: 'v1', kind: 'Team', name: 'y', uid: '2', controller: true },
      ],
    }),
    'metadata.ownerReferences',
    'FieldValueInvalid',
    'Only one reference can have Controller set to true. Found "true" in references for Team/x and Team/y',
  ],
  ['an owner reference without uid', 'teams', team('a', {}, { ownerReferences: [{ apiVersion: 'v1', kind: 'Team', name: 'x' }] }), 'metadata.ownerReferences[0].uid', 'FieldValueRequired'],
  ['users that is a string', 'teams', team('a', { users: 'ana' }), 'spec.users', 'FieldValueTypeInvalid', 'Invalid value: "string": spec.users in body must be of type array: "string"'],
  ['a duplicate user (set list)', 'teams', team('a', { users: ['ana', 'ana'] }), 'spec.users[1]', 'FieldValueDuplicate', 'Duplicate value: "ana"'],
  ['a duplicate cluster role (map list keyed by name)', 'teams', team('a', { clusterRoles: [{ name: 'r' }, { name: 'r' }] }), 'spec.clusterRoles[1]', 'FieldValueDuplicate'],
  ['a cluster role without name', 'teams', team('a', { clusterRoles: [{}] }), 'spec.clusterRoles[0].name', 'FieldValueRequired'],
  ['an access rule without verbs', 'teams', team('a', { access: [{ users: ['x'] }] }), 'spec.access[0].verbs', 'FieldValueRequired'],
  ['a display name that is a number', 'teams', team('a', { displayName: 7 }), 'spec.displayName', 'FieldValueTypeInvalid'],
  ['spec that is a list', 'teams', team('a', [] as unknown as Record<string, unknown>), 'spec', 'FieldValueTypeInvalid'],
  ['an access key with no user, team or subject', 'ownedaccesskeys', accessKey('k', {}), 'spec.user', 'FieldValueRequired', 'exactly one of spec.user, spec.team or spec.subject must be set'],
  ['an access key with user and team', 'ownedaccesskeys', accessKey('k', { user: 'ana', team: 't' }), 'spec.team', 'FieldValueInvalid'],
  ['an access key without spec', 'ownedaccesskeys', { metadata: { name: 'k' } }, 'spec', 'FieldValueRequired'],
  ['an unknown key type', 'ownedaccesskeys', accessKey('k', { ...user, type: 'Robot' }), 'spec.type', 'FieldValueNotSupported', 'supported values: "", "Login", "User"'],
  ['a negative ttl', 'ownedaccesskeys', accessKey('k', { ...user, ttl: -1 }), 'spec.ttl', 'FieldValueInvalid', 'should be greater than or equal to 0'],
  ['a fractional ttl', 'ownedaccesskeys', accessKey('k', { ...user, ttl: 1.5 }), 'spec.ttl', 'FieldValueTypeInvalid'],
  ['an unknown scope role', 'ownedaccesskeys', accessKey('k', { ...user, scope: { roles: [{ role: 'root' }] } }), 'spec.scope.roles[0].role', 'FieldValueNotSupported'],
  ['a duplicate scope project', 'ownedaccesskeys', accessKey('k', { ...user, scope: { projects: [{ project: 'p' }, { project: 'p' }] } }), 'spec.scope.projects[1]', 'FieldValueDuplicate'],
  ['a bad identityRefresh time', 'ownedaccesskeys', accessKey('k', { ...user, identityRefresh: 'yesterday' }), 'spec.identityRefresh', 'FieldValueInvalid', 'must be of type date-time'],
];

describe('validation: every bad field is a 422 Invalid naming its path', () => {
  it.each(cases)('%s', async (_label, plural, body, field, reason, message) => {
    const { registry } = newRegistry();
    const s = await statusOf(registry.byPlural(plural)!.create(body));
    expect(s.code).toBe(422);
    expect(s.reason).toBe('Invalid');
    const cause = s.details?.causes?.find((c) => c.field === field);
    expect(cause, `no cause for ${field} in ${JSON.stringify(s.details?.causes)}`).toBeDefined();
    expect(cause!.reason).toBe(reason);
    if (message) expect(cause!.message).toContain(message);
    expect(s.message).toContain(`${field}: `);
    // Nothing was written.
    expect((await registry.byPlural(plural)!.list()).items).toEqual([]);
  });

  it('lists every offending field of one object in one answer', async () => {
    const { registry } = newRegistry();
    const s = await statusOf(
      registry.teams.create(team('Bad', { users: 'x', clusterRoles: [{ name: 'r' }, { name: 'r' }], access: [{}] }, { labels: { 'a b': 'c' } })),
    );
    expect(s.details?.causes?.map((c) => c.field)).toEqual([
      'metadata.name',
      'metadata.labels',
      'spec.users',
      'spec.access[0].verbs',
      'spec.clusterRoles[1]',
    ]);
    expect(s.message).toMatch(/^Team\.management\.service "Bad" is invalid: \[metadata\.name: Invalid value: "Bad": /);
    expect(s.details).toMatchObject({ name: 'Bad', group: 'management.service', kind: 'Team' });
  });

  it('never echoes an access key value in a validation error', async () => {
    const { registry } = newRegistry();
    const secret = 'short-but-secret-value';
    const s = await statusOf(registry.ownedaccesskeys.create(accessKey('k', { user: 'ana', key: secret })));
    expect(s.details?.causes?.[0]).toMatchObject({ field: 'spec.key', reason: 'FieldValueInvalid' });
    expect(JSON.stringify(s)).not.toContain(secret);
  });

  it('cuts very long values short in messages', async () => {
    const { registry } = newRegistry();
    const s = await statusOf(registry.teams.create(team('a', {}, { labels: { k: 'v'.repeat(5000) } })));
    expect(s.message!.length).toBeLessThan(2000);
    expect(s.message).toContain('(truncated)');
  });
});
