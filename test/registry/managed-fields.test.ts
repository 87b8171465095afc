import { describe, expect, it } from 'vitest';
import type { ManagedFieldsEntry } from '../../src/api/types.js';
import { newRegistry, statusOf, team } from './helpers.js';

const entries = (o: { metadata: { managedFields?: ManagedFieldsEntry[] } }) =>
  (o.metadata.managedFields ?? []).map((e) => [e.manager, e.operation, e.subresource ?? '', e.fieldsV1]);

describe('managedFields on every write', () => {
  it('records the creator, then who changed what, per manager, operation and subresource', async () => {
    const { registry, clock } = newRegistry();
    const { object: created } = await registry.teams.create(team('t', { users: ['ana'], displayName: 'T' }), { fieldManager: 'kubectl-create' });
    expect(entries(created)).toEqual([
      ['kubectl-create', 'Update', '', { 'f:spec': { 'f:displayName': {}, 'f:users': { '.': {}, 'v:"ana"': {} } } }],
    ]);
    clock.advance(60);
    const { object: patched } = await registry.teams.patch('t', 'merge', { spec: { displayName: 'Edited' } }, { fieldManager: 'kubectl-edit' });
    expect(entries(patched)).toEqual([
      ['kubectl-create', 'Update', '', { 'f:spec': { 'f:users': { '.': {}, 'v:"ana"': {} } } }],
      ['kubectl-edit', 'Update', '', { 'f:spec': { 'f:displayName': {} } }],
    ]);
    // time moves only for the manager that changed something.
    expect(patched.metadata.managedFields![0]!.time).toBe(created.metadata.managedFields![0]!.time);
    expect(patched.metadata.managedFields![1]!.time).not.toBe(created.metadata.managedFields![0]!.time);
  });

  it('a write that changes nothing changes neither managedFields nor resourceVersion', async () => {
    const { registry } = newRegistry();
    const { object } = await registry.teams.create(team('t', { users: ['ana'] }), { fieldManager: 'a' });
    const { object: again } = await registry.teams.update('t', object, { fieldManager: 'b' });
    expect(again.metadata.resourceVersion).toBe(object.metadata.resourceVersion);
    expect(again.metadata.managedFields).toEqual(object.metadata.managedFields);
  });

  it('a status write is recorded with its subresource', async () => {
    const { registry } = newRegistry();
    await registry.ownedaccesskeys.create({ metadata: { name: 'k' }, spec: { user: 'u' } }, { fieldManager: 'creator' });
    const { object } = await registry.ownedaccesskeys.patch('k', 'merge', { status: { lastActivity: '2026-01-01T00:00:00Z' } }, { subresource: 'status', fieldManager: 'server' });
    expect(entries(object)).toContainEqual(['server', 'Update', 'status', { 'f:status': { 'f:lastActivity': {} } }]);
  });

  it('a client resets the record by sending managedFields: [] (or [{}])', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('t', { users: ['ana'] }), { fieldManager: 'a' });
    await registry.teams.patch('t', 'merge', { spec: { displayName: 'B' } }, { fieldManager: 'b' });
    const current = await registry.teams.get('t');
    const { object } = await registry.teams.update('t', { ...current, metadata: { ...current.metadata, managedFields: [{}] }, spec: { users: ['ana'], displayName: 'C' } }, { fieldManager: 'c' });
    expect(entries(object).map((e) => e[0])).toEqual(['c']);
  });

  it('server-side apply creates, then owns exactly what it applies; a conflict names field and manager', async () => {
    const { registry } = newRegistry();
    const first = await registry.teams.apply('t', team('t', { users: ['a', 'b'], displayName: 'A' }), { fieldManager: 'gitops' });
    expect(first.created).toBe(true);
    // As structured-merge-diff writes an Apply entry: the list's items, not a node for the list itself.
    expect(entries(first.object)).toEqual([['gitops', 'Apply', '', { 'f:spec': { 'f:displayName': {}, 'f:users': { 'v:"a"': {}, 'v:"b"': {} } } }]]);
    await registry.teams.patch('t', 'merge', { spec: { displayName: 'Edited' } }, { fieldManager: 'kubectl-edit' });
    const s = await statusOf(registry.teams.apply('t', team('t', { users: ['a', 'b'], displayName: 'A' }), { fieldManager: 'gitops' }));
    expect(s.code).toBe(409);
    expect(s.reason).toBe('Conflict');
    expect(s.message).toMatch(/^Apply failed with 1 conflict: conflict with "kubectl-edit" using management.service\/v1 at \S+Z: \.spec\.displayName$/);
    expect(s.details?.causes).toEqual([{ reason: 'FieldManagerConflict', message: expect.stringContaining('conflict with "kubectl-edit"'), field: '.spec.displayName' }]);
    const forced = await registry.teams.apply('t', team('t', { users: ['a'], displayName: 'A' }), { fieldManager: 'gitops', force: true });
    expect(forced.created).toBe(false);
    expect(forced.object.spec).toEqual({ users: ['a'], displayName: 'A' });
    expect(entries(forced.object)).toEqual([['gitops', 'Apply', '', { 'f:spec': { 'f:displayName': {}, 'f:users': { 'v:"a"': {} } } }]]);
    expect(await statusOf(registry.teams.apply('t', team('t'), {}))).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      details: { group: 'meta.k8s.io', kind: 'PatchOptions', causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }] },
    });
  });

  it('kubectl moving from client-side to server-side apply takes the last-applied fields; other conflicts stand, alone', async () => {
    const { registry } = newRegistry();
    const lastApplied = JSON.stringify(team('t', { displayName: 'A' }));
    await registry.teams.create(team('t', { displayName: 'A' }, { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } }), { fieldManager: 'kubectl-client-side-apply' });
    await registry.teams.patch('t', 'merge', { spec: { description: 'by hand' } }, { fieldManager: 'kubectl-edit' });
    // A manager other than kubectl opts out of the upgrade.
    expect((await statusOf(registry.teams.apply('t', team('t', { displayName: 'B' }), { fieldManager: 'other' }))).code).toBe(409);
    const both = await statusOf(registry.teams.apply('t', team('t', { displayName: 'B', description: 'applied' }), { fieldManager: 'kubectl' }));
    expect(both.message).toBe(`Apply failed with 1 conflict: conflict with "kubectl-edit" using management.service/v1 at 2026-01-01T00:00:00Z: .spec.description`);
    const moved = await registry.teams.apply('t', team('t', { displayName: 'B' }), { fieldManager: 'kubectl' });
    expect(moved.object.spec).toEqual({ displayName: 'B', description: 'by hand' });
    expect(JSON.parse(moved.object.metadata.annotations!['kubectl.kubernetes.io/last-applied-configuration']!)).toEqual(team('t', { displayName: 'B' }));
    expect(entries(moved.object).find(([m]) => m === 'kubectl')).toEqual(['kubectl', 'Apply', '', { 'f:spec': { 'f:displayName': {} } }]);
  });
});
