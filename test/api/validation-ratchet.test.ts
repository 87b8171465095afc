/**
 * Validation ratcheting (src/api/ratchet.ts): an update is judged on the values it changes. An
 * object stored in a shape the rules refuse can still be changed elsewhere; nothing invalid can be
 * added by an update, and a value made valid stays judged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resourceModels } from '../../src/api/model.js';
import type { KubeObject } from '../../src/api/types.js';
import { validateObject } from '../../src/api/validate.js';

const { ownedaccesskeys: keys, teams } = resourceModels();
const key = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'k', uid: 'u1', ...metadata }, spec: { user: 'ana', ...spec } }) as KubeObject;
const fields = (errs: { field: string }[]) => errs.map((e) => e.field);

describe('validation ratcheting', () => {
  it('an update that leaves an invalid field as stored is judged on what it changed', () => {
    const old = key({ displayName: 5, groups: ['a', 'a'] }, { labels: { 'bad key!': 'v' } });
    expect(fields(validateObject(keys, old))).toEqual(expect.arrayContaining(['metadata.labels', 'spec.displayName', 'spec.groups[1]']));
    const next = key({ displayName: 5, groups: ['a', 'a'], disabled: true }, { labels: { 'bad key!': 'v' } });
    expect(validateObject(keys, next, old)).toEqual([]);
  });

  it('a changed value is judged in full, and so is every value on create', () => {
    const old = key({ displayName: 5, groups: ['a', 'a'] }, { labels: { 'bad key!': 'v' } });
    // Another invalid value in the field, one more item in the list, another label beside the bad one.
    const next = key({ displayName: 6, groups: ['a', 'a', 'b'] }, { labels: { 'bad key!': 'v', ok: 'v' } });
    expect(fields(validateObject(keys, next, old))).toEqual(expect.arrayContaining(['metadata.labels', 'spec.displayName', 'spec.groups[1]']));
    expect(validateObject(keys, next).length).toBeGreaterThan(0);
  });

  it('a field the stored object lacked is judged when an update sets it', () => {
    const old = key({});
    const errs = validateObject(keys, key({ displayName: 7 }), old);
    expect(errs).toEqual([expect.objectContaining({ field: 'spec.displayName', type: 'TypeInvalid' })]);
  });

  it('a key stored with two holders can be changed elsewhere, and not given another holder', () => {
    const old = key({ team: 'ops' });
    expect(fields(validateObject(keys, old))).toEqual(['spec.team']);
    expect(validateObject(keys, key({ team: 'ops', disabled: true }), old)).toEqual([]);
    expect(fields(validateObject(keys, key({ team: 'dev', disabled: true }), old))).toEqual(['spec.team']);
  });

  it('a field the stored object lacked where the schema requires it: judged at the object it belongs to (found by a review)', () => {
    const team = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject =>
      ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 't', uid: 'u', ...metadata }, spec }) as KubeObject;
    // A finalizer removed from a Team stored without breakGlass.users: the object lacking it is unchanged.
    const old = team({ accessRequests: { breakGlass: {} } }, { finalizers: ['example.com/hold'] });
    expect(validateObject(teams, team({ accessRequests: { breakGlass: {} } }), old)).toEqual([]);
    // The object changed: the missing field is judged.
    expect(fields(validateObject(teams, team({ accessRequests: { breakGlass: { reason: 'x' } } }), old))).toContain('spec.accessRequests.breakGlass.users');
  });

  it('a list stored longer than its bound is judged only when it changes, and a map list is compared whole (unlike kube, which matches its items by key)', () => {
    const long = Array.from({ length: 1001 }, (_, i) => `g${i}`);
    const old = key({ groups: long });
    expect(validateObject(keys, old)).toEqual([expect.objectContaining({ field: 'spec.groups', type: 'TooMany' })]);
    expect(validateObject(keys, key({ groups: long, disabled: true }), old)).toEqual([]);
    expect(fields(validateObject(keys, key({ groups: [...long, 'more'] }), old))).toEqual(['spec.groups']);
    const stored = key({ scope: { projects: [{ project: 'p'.repeat(300) }] } });
    expect(fields(validateObject(keys, key({ scope: { projects: [{ project: 'p'.repeat(300) }, { project: 'ok' }] } }), stored))).toEqual(['spec.scope.projects[0].project']);
  });

  it('from a valid object, an update is refused exactly when the same object would be refused on create (generated)', () => {
    // Values of every kind at fields with rules: an update from a valid stored object can add
    // nothing invalid through ratcheting, since nothing invalid was there to keep.
    const anything = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.oneof(fc.string({ maxLength: 3 }), fc.integer()), { maxLength: 3 }));
    const team = (spec: Record<string, unknown>, labels?: Record<string, unknown>): KubeObject =>
      ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 't', uid: 'u', ...(labels ? { labels } : {}) }, spec }) as KubeObject;
    const field = fc.constantFrom('displayName', 'description', 'users', 'groups', 'clusterRoles', 'username', 'imagePullSecrets');
    fc.assert(
      fc.property(fc.dictionary(field, anything, { maxKeys: 4 }), fc.dictionary(field, anything, { maxKeys: 4 }), fc.option(fc.dictionary(fc.constantFrom('ok', 'bad key!', 'a/b/c'), fc.string({ maxLength: 4 }), { maxKeys: 2 }), { nil: undefined }), (a, b, labels) => {
        const old = team(a);
        fc.pre(validateObject(teams, old).length === 0);
        const next = team({ ...a, ...b }, labels);
        expect(validateObject(teams, next, old).length > 0).toBe(validateObject(teams, next).length > 0);
      }),
      { numRuns: 300, seed: 38 },
    );
  });
});
