/**
 * One audit event per delete, stored with the write that ends it (delete.ts): the removal, or the
 * start of terminating; a delete that removes an object at once, or that brings a terminating one to
 * its removal, says so once (what the server's audit trail is told, through the registry's
 * observer). And the sealed values of a deleted key do not outlive it in the store's history.
 */
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/api/audit-event.js';
import { createRegistry } from '../../src/registry/registry.js';
import type { ObservedWrite } from '../../src/registry/write-observer.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import type { StoredObject } from '../../src/store/types.js';
import { team } from './helpers.js';

describe('the audit of a delete', () => {
  it('one event per delete: the removal, the start of terminating, and a late removal, each once', async () => {
    const committed: string[] = [];
    const store = new MemoryStore();
    const registry = createRegistry(store, {
      onWrite: {
        eventOf: (w: ObservedWrite) =>
          ({ verb: w.verb, objectRef: { resource: w.resource, name: w.object.metadata.name }, note: w.object.metadata.deletionTimestamp ? 'terminating' : 'live' }) as unknown as AuditEvent,
        committed: (e: AuditEvent) => {
          const ev = e as unknown as { verb: string; objectRef: { name: string }; note: string };
          committed.push(`${ev.verb} ${ev.objectRef.name} ${ev.note}`);
        },
      },
    });
    await registry.teams.create(team('plain'));
    await registry.teams.create(team('held', {}, { finalizers: ['example.com/cleanup'] }));
    await registry.teams.create(team('legacy'));
    // As an older version left it: deletion requested, a deadline ahead, no finalizer.
    await store.guaranteedUpdate<StoredObject>('/teams/legacy', undefined, (cur) => {
      const metadata = { ...(cur as unknown as { metadata: object }).metadata, deletionTimestamp: '2027-01-01T00:00:00Z' };
      return { ...cur, metadata } as StoredObject;
    });
    committed.length = 0;
    await registry.teams.delete('plain');
    await registry.teams.delete('held');
    await registry.teams.delete('legacy');
    await registry.teams.delete('plain', { dryRun: true }).catch(() => {});
    expect(committed).toEqual(['delete plain live', 'delete held terminating', 'delete legacy terminating']);
  });

  it("a deleted key's sealed values are scrubbed from the history it leaves", async () => {
    const store = new MemoryStore();
    const registry = createRegistry(store);
    const { object } = await registry.ownedaccesskeys.create({ metadata: { name: 'k' }, spec: { user: 'u', key: 'K'.repeat(40) } });
    const at = Number(object.metadata.resourceVersion);
    const past = async () => (await store.list<StoredObject & { sealed?: unknown }>('/ownedaccesskeys/', { revision: at })).items[0];
    expect((await past())?.sealed).toBeDefined();
    await registry.ownedaccesskeys.delete('k');
    const after = await past();
    expect(after?.metadata).toMatchObject({ name: 'k' });
    expect(after?.sealed).toBeUndefined();
  });
});
