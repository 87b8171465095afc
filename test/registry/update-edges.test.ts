/**
 * Updates where the everyday tests (update.test.ts) do not go: a status write the schema refuses
 * (the Status names the object), and a dry run that would remove a terminating object (its answer
 * is the object, and nothing stored changes: not its history's secrets either).
 */
import { describe, expect, it } from 'vitest';
import type { StoredApiObject } from '../../src/api/secrets.js';
import { accessKey, newRegistry, statusOf } from './helpers.js';

describe('updates, edges', () => {
  it('a status the schema refuses: 422 naming the object', async () => {
    const { registry } = newRegistry();
    const { object } = await registry.ownedaccesskeys.create(accessKey('k', { user: 'ana' }));
    const status = await statusOf(registry.ownedaccesskeys.update('k', { ...object, status: { lastActivity: 5 } } as never, { subresource: 'status' }));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid', details: { name: 'k', kind: 'OwnedAccessKey' } });
    expect(status.message).toMatch(/^OwnedAccessKey\.management\.service "k" is invalid: status\.lastActivity/);
  });

  it('a dry run that takes the last finalizer off a terminating key answers the key and changes nothing stored', async () => {
    const { registry, store } = newRegistry();
    const { object: created } = await registry.ownedaccesskeys.create(accessKey('k', { user: 'ana' }, { finalizers: ['example.com/hold'] }));
    const { object: terminating } = await registry.ownedaccesskeys.delete('k');
    const { object } = await registry.ownedaccesskeys.patch('k', 'json', [{ op: 'remove', path: '/metadata/finalizers' }], { dryRun: true });
    expect(object.metadata).toMatchObject({ name: 'k', uid: created.metadata.uid, deletionTimestamp: terminating.metadata.deletionTimestamp });
    expect(object.metadata.finalizers).toBeUndefined();
    expect(await registry.ownedaccesskeys.get('k')).toEqual(terminating);
    // The key's history keeps its sealed value: only a real removal scrubs it.
    const first = await store.list<StoredApiObject>('/ownedaccesskeys/', { revision: Number(created.metadata.resourceVersion) });
    expect(first.items[0]?.sealed?.keyHash).toMatch(/^sha256:/);
  });

  it("a key removed by taking its last finalizer off leaves no sealed value in its history, as a delete's does", async () => {
    const { registry, store } = newRegistry();
    const sealedAt = async (revision: string | undefined) =>
      (await store.list<StoredApiObject>('/ownedaccesskeys/', { revision: Number(revision) })).items.map((o) => [o.metadata.name, o.sealed !== undefined]);
    const { object: deleted } = await registry.ownedaccesskeys.create(accessKey('deleted', { user: 'ana' }));
    await registry.ownedaccesskeys.delete('deleted');
    expect(await sealedAt(deleted.metadata.resourceVersion)).toEqual([['deleted', false]]);
    const { object: held } = await registry.ownedaccesskeys.create(accessKey('held', { user: 'ana' }, { finalizers: ['example.com/hold'] }));
    await registry.ownedaccesskeys.delete('held');
    await registry.ownedaccesskeys.patch('held', 'json', [{ op: 'remove', path: '/metadata/finalizers' }]);
    expect((await statusOf(registry.ownedaccesskeys.get('held'))).code).toBe(404);
    expect(await sealedAt(held.metadata.resourceVersion)).toEqual([['held', false]]);
  });
});
