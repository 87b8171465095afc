import { describe, expect, it } from 'vitest';
import { resourceModels } from '../../src/api/model.js';
import type { KubeObject } from '../../src/api/types.js';
import { EmbeddedClient } from '../../src/client/embedded.js';
import { applyPlan } from '../../src/gitops/apply/apply.js';
import { planObject, planReconcile, type PlanOptions } from '../../src/gitops/plan/plan.js';
import type { DesiredObject } from '../../src/gitops/validate.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';

const models = resourceModels();
const v1 = 'management.service/v1';
const manifest = { file: 'x.yaml', line: 1, column: 1, object: {}, locate: () => ({ file: 'x.yaml', line: 1, column: 1 }) };
const want = (plural: 'teams' | 'ownedaccesskeys', name: string, spec: Record<string, unknown> = {}): DesiredObject => ({
  plural,
  obj: { apiVersion: v1, kind: plural === 'teams' ? 'Team' : 'OwnedAccessKey', metadata: { name }, spec },
  manifest,
});
const managed = (kind: string, name: string): KubeObject => ({
  apiVersion: v1,
  kind,
  metadata: { name, uid: `uid-${name}`, resourceVersion: '1', annotations: { 'gitops.management.service/source': 's' } },
});
const opts: PlanOptions = { sourceId: 's', prune: true, allowEmpty: false, maxPrune: 10 };

describe('planning is a pure, ordered pairing', () => {
  it('creates teams before keys and deletes keys before teams, by name', () => {
    const plan = planReconcile(
      [want('ownedaccesskeys', 'k-b', { team: 't-b' }), want('teams', 't-b'), want('ownedaccesskeys', 'k-a', { user: 'u' }), want('teams', 't-a')],
      { teams: [managed('Team', 'old-team')], ownedaccesskeys: [managed('OwnedAccessKey', 'old-key')] },
      models,
      opts,
    );
    expect(plan.actions.map((a) => `${a.type} ${a.kind}/${a.name}`)).toEqual([
      'create Team/t-a',
      'create Team/t-b',
      'create OwnedAccessKey/k-a',
      'create OwnedAccessKey/k-b',
      'delete OwnedAccessKey/old-key',
      'delete Team/old-team',
    ]);
  });

  it.each([
    ['more deletions than --max-prune', { ...opts, maxPrune: 1 }, [want('teams', 'keep')], 'more than --max-prune 1'],
    ['an empty source with pruning on', opts, [], 'the source holds no objects'],
  ])('refuses %s', (_label, o, desired, why) => {
    const plan = planReconcile(desired, { teams: [managed('Team', 'a'), managed('Team', 'b')], ownedaccesskeys: [] }, models, o);
    expect(plan.refused).toContain(why);
  });

  it('an empty source without --prune deletes nothing and refuses nothing', () => {
    const plan = planReconcile([], { teams: [managed('Team', 'a')], ownedaccesskeys: [] }, models, { ...opts, prune: false });
    expect(plan.refused).toBeUndefined();
    expect(plan.actions.map((a) => [a.type, a.reason])).toEqual([['skip', 'not in the source; pruned only with --prune']]);
  });

  it('an update is a JSON patch led by the live resourceVersion, a precondition', () => {
    const live = { ...managed('Team', 't'), spec: { displayName: 'Old' } };
    const a = planObject(models.teams, want('teams', 't', { displayName: 'New' }), live, opts);
    expect(a.type).toBe('update');
    expect(a.patch).toEqual([
      { op: 'replace', path: '/metadata/resourceVersion', value: '1' },
      { op: 'replace', path: '/spec/displayName', value: 'New' },
    ]);
  });
});

describe('applying re-plans an object that changed since the plan', () => {
  it('converges when another writer got there first', async () => {
    const registry = createRegistry(new MemoryStore());
    const client = new EmbeddedClient(registry, 'memory:');
    await client.create('teams', { apiVersion: v1, kind: 'Team', metadata: { name: 't', annotations: { 'gitops.management.service/source': 's' } }, spec: { displayName: 'Old' } });
    const desired = want('teams', 't', { displayName: 'New', users: ['ana'] });
    const plan = planReconcile([desired], { teams: await client.list('teams'), ownedaccesskeys: [] }, models, opts);
    // Someone writes between our plan and our apply: the guarded patch must not clobber blindly.
    await registry.teams.patch('t', 'merge', { spec: { description: 'meanwhile' } }, { fieldManager: 'other' });
    let replans = 0;
    const [entry] = await applyPlan(client, plan.actions, {
      concurrency: 1,
      replan: async (a) => {
        replans++;
        return planObject(models.teams, desired, await client.get('teams', a.name), opts);
      },
    });
    expect(entry!.result).toBe('Updated');
    expect(replans).toBe(1);
    expect((await client.get('teams', 't'))!.spec).toEqual({ displayName: 'New', users: ['ana'], description: 'meanwhile' });
  });
});
