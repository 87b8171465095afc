/**
 * What server-side apply takes beside the configuration: the name on the URL when the body has
 * none (as kube-apiserver fills it), and kubectl's last-applied annotation, which only kubectl's
 * own apply rewrites (kube's lastAppliedUpdater); another manager's apply leaves it as it was.
 */
import { describe, expect, it } from 'vitest';
import { newRegistry, team } from './helpers.js';

const last = 'kubectl.kubernetes.io/last-applied-configuration';

describe('server-side apply: the configuration and what it leaves', () => {
  it('a configuration without a name takes the one on the URL, for a create and for an update', async () => {
    const { registry } = newRegistry();
    const nameless = (displayName: string) => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: {}, spec: { displayName } });
    const created = await registry.teams.apply('t', nameless('A'), { fieldManager: 'gitops' });
    expect([created.created, created.object.metadata.name]).toEqual([true, 't']);
    const updated = await registry.teams.apply('t', nameless('B'), { fieldManager: 'gitops' });
    expect([updated.created, updated.object.metadata.name, updated.object.spec]).toEqual([false, 't', { displayName: 'B' }]);
  });

  it("another manager's apply leaves kubectl's last-applied annotation as it was; kubectl's own rewrites it", async () => {
    const { registry } = newRegistry();
    const recorded = `${JSON.stringify(team('t', { displayName: 'A' }))}\n`;
    await registry.teams.create(team('t', { displayName: 'A' }, { annotations: { [last]: recorded } }), { fieldManager: 'kubectl-client-side-apply' });
    const other = await registry.teams.apply('t', team('t', { description: 'd' }), { fieldManager: 'gitops' });
    expect(other.object.metadata.annotations).toEqual({ [last]: recorded });
    const kubectl = await registry.teams.apply('t', team('t', { displayName: 'A', description: 'e' }), { fieldManager: 'kubectl', force: true });
    expect(JSON.parse(kubectl.object.metadata.annotations![last]!)).toEqual(team('t', { displayName: 'A', description: 'e' }));
  });
});
