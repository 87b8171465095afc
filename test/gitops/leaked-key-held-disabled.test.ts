/**
 * A key managed from Git that is reported leaked (POST /auth/revoke, GitHub secret scanning) stays
 * disabled through the reconciler's next runs. spec.disabled is an authoritative field (git's value
 * is the whole value): before plan/ignore-fields.ts heldDisabled, a manifest that leaves it out
 * planned its removal as drift, and applying the plan re-enabled the leaked key.
 */
import { describe, expect, it } from 'vitest';
import { resourceModels } from '../../src/api/model.js';
import { maxAnnotationsBytes } from '../../src/api/object-meta.js';
import { hashKey } from '../../src/api/secrets.js';
import { EmbeddedClient } from '../../src/client/embedded.js';
import { applyPlan } from '../../src/gitops/apply/apply.js';
import { planReconcile, type PlanOptions } from '../../src/gitops/plan/plan.js';
import type { DesiredObject } from '../../src/gitops/validate.js';
import { createRegistry } from '../../src/registry/registry.js';
import { reportLeakedKey } from '../../src/server/leaks/leaked-keys.js';
import { MemoryStore } from '../../src/store/backends/memory.js';

const models = resourceModels();
const v1 = 'management.service/v1';
const manifest = { file: 'keys.yaml', line: 1, column: 1, object: {}, locate: () => ({ file: 'keys.yaml', line: 1, column: 1 }) };
const opts: PlanOptions = { sourceId: 's', prune: true, allowEmpty: false, maxPrune: 10 };

describe('a leaked key managed from git', () => {
  it('stays disabled after the reconciler runs again', async () => {
    const registry = createRegistry(new MemoryStore());
    const client = new EmbeddedClient(registry, 'memory:');
    const desired: DesiredObject = { plural: 'ownedaccesskeys', obj: { apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name: 'deploy' }, spec: { user: 'ci' } }, manifest };
    // First reconcile: the key is created from git.
    const first = planReconcile([desired], { teams: [], ownedaccesskeys: await client.list('ownedaccesskeys') }, models, opts);
    await applyPlan(client, first.actions, { concurrency: 1 });
    // The server made its value; take it from the store's hash by setting a known one (the report needs the value).
    const value = `Leaked${'x'.repeat(40)}`;
    await registry.ownedaccesskeys.patch('deploy', 'merge', { spec: { key: value } }, { fieldManager: 'owner' });
    expect((await registry.ownedaccesskeys.findByIndex(hashKey(value))).items).toHaveLength(1);

    // Someone finds it in a public repository and revokes it.
    const outcome = await reportLeakedKey(registry, value, { address: '203.0.113.9', via: 'revoke', username: 'system:anonymous' }, new Date());
    expect(outcome).toEqual({ known: true, disabled: 'deploy' });
    expect(((await registry.ownedaccesskeys.get('deploy')) as { spec: { disabled?: boolean } }).spec.disabled).toBe(true);

    // The reconciler's next run (daemon interval, the Action on the next push).
    const next = planReconcile([desired], { teams: [], ownedaccesskeys: await client.list('ownedaccesskeys') }, models, opts);
    await applyPlan(client, next.actions, { concurrency: 1 });
    const after = (await registry.ownedaccesskeys.get('deploy')) as { spec: { disabled?: boolean } };
    expect(after.spec.disabled, JSON.stringify(next.actions.map((a) => [a.type, a.changes]))).toBe(true);
    // The plan says why, and holds nothing else back: a label git adds is still written.
    expect(next.actions.map((a) => [a.type, a.reason])).toEqual([['skip', expect.stringContaining('held disabled by the server (management.service/disabled-reason: reported-leaked)')]]);
    const labelled: DesiredObject = { ...desired, obj: { ...desired.obj, metadata: { name: 'deploy', labels: { tier: 'ci' } } } };
    const third = planReconcile([labelled], { teams: [], ownedaccesskeys: await client.list('ownedaccesskeys') }, models, opts);
    expect(third.actions.map((a) => [a.type, a.changes.map((c) => c.path)])).toEqual([['update', ['metadata.labels.tier']]]);
    await applyPlan(client, third.actions, { concurrency: 1 });
    const labelledKey = (await registry.ownedaccesskeys.get('deploy')) as { metadata: { labels?: Record<string, string> }; spec: { disabled?: boolean } };
    expect([labelledKey.metadata.labels, labelledKey.spec.disabled]).toEqual([{ tier: 'ci' }, true]);
    // Removing the reason alone does not release it: the server's field manager still holds spec.disabled.
    await registry.ownedaccesskeys.patch('deploy', 'json', [{ op: 'remove', path: '/metadata/annotations/management.service~1disabled-reason' }], { fieldManager: 'owner' });
    const fourth = planReconcile([labelled], { teams: [], ownedaccesskeys: await client.list('ownedaccesskeys') }, models, opts);
    expect(fourth.actions.map((a) => [a.type, a.reason])).toEqual([['skip', expect.stringContaining('field manager teamkeys-leak-report')]]);
    // A person enables it by hand (after rotating it): git's value applies again, and keeps it so.
    await registry.ownedaccesskeys.patch('deploy', 'merge', { spec: { disabled: false } }, { fieldManager: 'owner' });
    const fifth = planReconcile([labelled], { teams: [], ownedaccesskeys: await client.list('ownedaccesskeys') }, models, opts);
    await applyPlan(client, fifth.actions, { concurrency: 1 });
    expect(((await registry.ownedaccesskeys.get('deploy')) as { spec: { disabled?: boolean } }).spec.disabled).toBeUndefined();
    expect(planReconcile([labelled], { teams: [], ownedaccesskeys: await client.list('ownedaccesskeys') }, models, opts).actions.map((a) => a.type)).toEqual(['unchanged']);
  });

  it("a leaked key whose annotations are full is disabled without the reason, and held by the leak report field manager", async () => {
    const registry = createRegistry(new MemoryStore());
    const client = new EmbeddedClient(registry, 'memory:');
    const desired: DesiredObject = { plural: 'ownedaccesskeys', obj: { apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name: 'deploy' }, spec: { user: 'ci' } }, manifest };
    await applyPlan(client, planReconcile([desired], { teams: [], ownedaccesskeys: [] }, models, opts).actions, { concurrency: 1 });
    const value = `Leaked${'y'.repeat(40)}`;
    const pad = 'pad.example.com/x';
    // The budget counts the client's annotations (the server's value-set-by is outside it: api/object-meta.ts).
    const present = Object.entries((await registry.ownedaccesskeys.get('deploy')).metadata.annotations ?? {}).filter(([k]) => k !== 'management.service/value-set-by').reduce((n, [k, v]) => n + k.length + v.length, 0);
    await registry.ownedaccesskeys.patch('deploy', 'merge', { metadata: { annotations: { [pad]: 'p'.repeat(maxAnnotationsBytes - present - pad.length) } }, spec: { key: value } }, { fieldManager: 'holder' });
    expect(await reportLeakedKey(registry, value, { address: '203.0.113.9', via: 'revoke', username: 'system:anonymous' }, new Date())).toEqual({ known: true, disabled: 'deploy' });
    const stored = (await registry.ownedaccesskeys.get('deploy')) as { metadata: { annotations: Record<string, string> }; spec: { disabled?: boolean } };
    expect([stored.spec.disabled, stored.metadata.annotations['management.service/disabled-reason']]).toEqual([true, undefined]);
    const next = planReconcile([desired], { teams: [], ownedaccesskeys: await client.list('ownedaccesskeys') }, models, opts);
    expect(next.actions.map((a) => [a.type, a.reason])).toEqual([['skip', expect.stringContaining('held disabled by the server (field manager teamkeys-leak-report)')]]);
  });

  it('a key git itself disables, or one disabled without a reason, is planned as before', async () => {
    const registry = createRegistry(new MemoryStore());
    const client = new EmbeddedClient(registry, 'memory:');
    const desired: DesiredObject = { plural: 'ownedaccesskeys', obj: { apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name: 'deploy' }, spec: { user: 'ci' } }, manifest };
    await applyPlan(client, planReconcile([desired], { teams: [], ownedaccesskeys: [] }, models, opts).actions, { concurrency: 1 });
    // Disabled by hand, no reason: drift that git's next run undoes (spec.disabled is git's).
    await registry.ownedaccesskeys.patch('deploy', 'merge', { spec: { disabled: true } }, { fieldManager: 'someone' });
    const plan = planReconcile([desired], { teams: [], ownedaccesskeys: await client.list('ownedaccesskeys') }, models, opts);
    expect(plan.actions.map((a) => [a.type, a.drift, a.reason])).toEqual([['update', true, undefined]]);
  });
});
