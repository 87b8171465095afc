/**
 * What server-side apply answers beyond the one-conflict case (managed-fields.test.ts): several
 * conflicts grouped by manager as kube-apiserver prints them, the manager of a subresource write,
 * a name that differs from the URL's, and a resourceVersion that is no longer the live one.
 */
import { describe, expect, it } from 'vitest';
import { applyConflict } from '../../src/registry/server-side-apply.js';
import { newRegistry, statusOf, team } from './helpers.js';

describe('server-side apply: what a refused apply says', () => {
  it('several conflicts: counted, grouped by manager in sorted order, one cause per field', async () => {
    const { registry } = newRegistry();
    await registry.teams.apply('t', team('t', { displayName: 'A', description: 'd' }), { fieldManager: 'gitops' });
    await registry.teams.patch('t', 'merge', { metadata: { labels: { env: 'dev' } } }, { fieldManager: 'kubectl-edit' });
    const s = await statusOf(registry.teams.apply('t', team('t', { displayName: 'B', description: 'e' }, { labels: { env: 'prod' } }), { fieldManager: 'ci' }));
    expect(s.code).toBe(409);
    expect(s.reason).toBe('Conflict');
    expect(s.message).toBe(
      [
        'Apply failed with 3 conflicts: conflicts with "gitops":',
        '- .spec.displayName',
        '- .spec.description',
        'conflicts with "kubectl-edit" using management.service/v1 at 2026-01-01T00:00:00Z:',
        '- .metadata.labels.env',
      ].join('\n'),
    );
    expect(s.details?.causes).toEqual(
      expect.arrayContaining([
        { reason: 'FieldManagerConflict', message: 'conflict with "gitops"', field: '.spec.description' },
        { reason: 'FieldManagerConflict', message: 'conflict with "gitops"', field: '.spec.displayName' },
        { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-edit" using management.service/v1 at 2026-01-01T00:00:00Z', field: '.metadata.labels.env' },
      ]),
    );
    expect(s.details?.causes).toHaveLength(3);
    // Nothing was written.
    const kept = await registry.teams.get('t');
    expect([kept.spec, kept.metadata.labels]).toEqual([{ displayName: 'A', description: 'd' }, { env: 'dev' }]);
  });

  it('names a subresource writer and an Update entry without a time as kube prints them', () => {
    const status = applyConflict([
      { manager: { manager: 'controller', operation: 'Update', apiVersion: 'management.service/v1', subresource: 'status' }, path: '["f:status","f:phase"]' },
      { manager: { operation: 'Apply', apiVersion: 'management.service/v1' }, path: '["f:spec","f:users"]' },
    ]).toStatus();
    expect(status.message).toBe(
      ['Apply failed with 2 conflicts: conflicts with "":', '- .spec.users', 'conflicts with "controller" with subresource "status" using management.service/v1:', '- .status.phase'].join('\n'),
    );
  });

  it('a name in the body other than the URL is 400; a stale resourceVersion is 409 and changes nothing', async () => {
    const { registry } = newRegistry();
    const bad = await statusOf(registry.teams.apply('t', team('other'), { fieldManager: 'ci' }));
    expect(bad).toMatchObject({ code: 400, reason: 'BadRequest', message: 'the name of the object (other) does not match the name on the URL (t)' });
    const { object } = await registry.teams.apply('t', team('t', { displayName: 'A' }), { fieldManager: 'ci' });
    await registry.teams.patch('t', 'merge', { spec: { description: 'later' } });
    const stale = { ...team('t', { displayName: 'B' }), metadata: { name: 't', resourceVersion: object.metadata.resourceVersion } };
    expect(await statusOf(registry.teams.apply('t', stale, { fieldManager: 'ci' }))).toMatchObject({ code: 409, reason: 'Conflict' });
    expect((await registry.teams.get('t')).spec).toEqual({ displayName: 'A', description: 'later' });
    const current = (await registry.teams.get('t')).metadata.resourceVersion;
    const fresh = await registry.teams.apply('t', { ...stale, metadata: { name: 't', resourceVersion: current } }, { fieldManager: 'ci' });
    expect(fresh.object.spec).toEqual({ displayName: 'B', description: 'later' });
  });

  it('kubectl without a last-applied annotation: a conflict stands; none is added; a config carrying the annotation is recorded without it', async () => {
    const { registry } = newRegistry();
    const last = 'kubectl.kubernetes.io/last-applied-configuration';
    await registry.teams.create(team('t', { displayName: 'A' }), { fieldManager: 'kubectl-client-side-apply' });
    expect(await statusOf(registry.teams.apply('t', team('t', { displayName: 'B' }), { fieldManager: 'kubectl' }))).toMatchObject({ code: 409, reason: 'Conflict' });
    const noAnnotations = await registry.teams.apply('t', team('t', { description: 'd' }), { fieldManager: 'kubectl' });
    expect(noAnnotations.object.metadata.annotations).toBeUndefined();
    await registry.teams.patch('t', 'merge', { metadata: { annotations: { note: 'n' } } });
    const other = await registry.teams.apply('t', team('t', { description: 'd' }), { fieldManager: 'kubectl' });
    expect(other.object.metadata.annotations).toEqual({ note: 'n' });
    // With the annotation present, kubectl's apply records its configuration there, minus the annotation itself.
    const config = team('t', { description: 'e' }, { annotations: { [last]: 'old' } });
    const recorded = await registry.teams.apply('t', config, { fieldManager: 'kubectl' });
    expect(JSON.parse(recorded.object.metadata.annotations![last]!)).toEqual(team('t', { description: 'e' }, { annotations: {} }));
  });
});
