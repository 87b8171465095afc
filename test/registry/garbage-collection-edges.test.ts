/**
 * The garbage collector where the everyday tests (garbage-collection.test.ts) do not go: a pass
 * asked for after stop, a pass that fails (logged, read again in full), a targeted pass whose
 * object went meanwhile, Orphan deletion of an owner whose dependents are tied to it (a Login
 * key's keys), guarded writes that lose a race within one pass, a second owner that is itself
 * waiting in the foreground, and an owner released with a finalizer of someone else left on it.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { KubeObject, OwnerReference } from '../../src/api/types.js';
import { GarbageCollector } from '../../src/registry/garbage-collector.js';
import { StorageError } from '../../src/store/errors.js';
import { eventually } from '../support/eventually.js';
import { newRegistry, team } from './helpers.js';

/** A logger whose lines the test reads. */
function captured() {
  const lines: { level: number; msg: string; err?: { message?: string } }[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  const warnings = () => lines.filter((l) => l.level === 40).map((l) => ({ msg: l.msg, err: l.err?.message }));
  return { log, warnings };
}

const refTo = (o: KubeObject, extra: Partial<OwnerReference> = {}): OwnerReference => ({
  apiVersion: 'management.service/v1',
  kind: o.kind,
  name: o.metadata.name!,
  uid: o.metadata.uid!,
  ...extra,
});

function world() {
  const fx = newRegistry();
  const gc = new GarbageCollector(fx.registry, pino({ level: 'silent' }));
  const exists = async (plural: 'teams' | 'ownedaccesskeys', name: string): Promise<KubeObject | undefined> =>
    fx.registry[plural].get(name).catch(() => undefined);
  const userKey = (name: string, owners: KubeObject[], metadata: Partial<KubeObject['metadata']> = {}) =>
    fx.registry.ownedaccesskeys.create({ metadata: { name, ownerReferences: owners.map((o) => refTo(o)), ...metadata }, spec: { user: 'u' } }).then((r) => r.object);
  return { ...fx, gc, exists, userKey };
}

describe('the garbage collector, edges', () => {
  it('a pass asked for after stop runs nothing and reports nothing done', async () => {
    const { registry, gc, userKey, exists } = world();
    const { object: t } = await registry.teams.create(team('t'));
    await userKey('k', [t]);
    await registry.teams.delete('t');
    await gc.stop();
    expect(await gc.pass()).toEqual({ deleted: [], orphaned: [], released: [] });
    expect(await exists('ownedaccesskeys', 'k')).toBeDefined();
  });

  it('a read that fails in a targeted pass is logged, and the next pass reads everything again', async () => {
    const { registry, store } = newRegistry();
    const { log, warnings } = captured();
    const gc = new GarbageCollector(registry, log, { debounceMs: 5, intervalMs: 600_000 });
    try {
      await gc.start();
      await gc.pass(); // the first, full pass
      // The next pass follows the change: it reads the key written, and that read fails once.
      let failed = 0;
      const get = store.get.bind(store);
      store.get = (async (key: string) => {
        if (key.endsWith('/dangling') && failed++ === 0) throw new StorageError('Unreachable', key, 'connection reset');
        return get(key);
      }) as typeof store.get;
      await registry.ownedaccesskeys.create({
        metadata: { name: 'dangling', ownerReferences: [{ apiVersion: 'management.service/v1', kind: 'Team', name: 'gone', uid: 'no-such-uid' }] },
        spec: { user: 'u' },
      });
      await eventually('the failed pass is logged', () => warnings().length > 0, 5000);
      expect(warnings()).toEqual([{ msg: 'garbage collection pass failed; will retry', err: 'storage is unavailable: connection reset' }]);
      // What the failed pass took from the changes is not lost: the next pass reads every owned object.
      expect((await gc.pass()).deleted).toEqual(['OwnedAccessKey/dangling']);
    } finally {
      await gc.stop();
    }
  });

  it('a targeted pass whose written object was deleted before it was read goes on without a failure', async () => {
    const { registry, store } = newRegistry();
    const { log, warnings } = captured();
    const gc = new GarbageCollector(registry, log, { debounceMs: 5, intervalMs: 600_000 });
    try {
      await gc.start();
      await gc.pass();
      const { object: t } = await registry.teams.create(team('t'));
      let raced = false;
      const get = store.get.bind(store);
      store.get = (async (key: string) => {
        if (key.endsWith('/short-lived') && !raced) {
          raced = true;
          await store.delete(key); // deleted between its change and the pass's read
        }
        return get(key);
      }) as typeof store.get;
      await registry.ownedaccesskeys.create({ metadata: { name: 'short-lived', ownerReferences: [refTo(t)] }, spec: { user: 'u' } });
      await eventually('the pass read the deleted key', () => raced, 5000);
      await gc.pass();
      expect(warnings()).toEqual([]);
    } finally {
      await gc.stop();
    }
  });

  it("Orphan on a Login key: the keys made with it are deleted, not orphaned, and only then is it released", async () => {
    const { registry, gc, exists, userKey } = world();
    const login = (await registry.ownedaccesskeys.create({ metadata: { name: 'a-login' }, spec: { type: 'Login', user: 'u' } })).object;
    await userKey('made', [login]);
    // Already being deleted (held by a finalizer of its own): not deleted again.
    await userKey('leaving', [login], { finalizers: ['example.com/hold'] });
    await registry.ownedaccesskeys.delete('leaving');
    const { object } = await registry.ownedaccesskeys.delete('a-login', { propagationPolicy: 'Orphan' });
    expect(object.metadata.finalizers).toEqual(['orphan']);
    const report = await gc.pass();
    expect(report).toEqual({ deleted: ['OwnedAccessKey/made'], orphaned: [], released: ['OwnedAccessKey/a-login'] });
    expect(await exists('ownedaccesskeys', 'made')).toBeUndefined();
    expect(await exists('ownedaccesskeys', 'a-login')).toBeUndefined();
    expect((await exists('ownedaccesskeys', 'leaving'))?.metadata.ownerReferences).toEqual([refTo(login)]);
  });

  it('Orphan on a Login key whose key changed within the pass: the owner waits for the next pass', async () => {
    const { registry, gc, exists, userKey } = world();
    const { object: t } = await registry.teams.create(team('t'));
    const login = (await registry.ownedaccesskeys.create({ metadata: { name: 'a-login' }, spec: { type: 'Login', user: 'u' } })).object;
    await userKey('b-made', [t, login]);
    // Teams come first in a pass: the team's orphaning rewrites the key, so the Login key's guarded delete of it loses.
    await registry.teams.delete('t', { propagationPolicy: 'Orphan' });
    await registry.ownedaccesskeys.delete('a-login', { propagationPolicy: 'Orphan' });
    const first = await gc.pass();
    expect(first).toEqual({ deleted: [], orphaned: ['OwnedAccessKey/b-made'], released: ['Team/t'] });
    expect((await exists('ownedaccesskeys', 'a-login'))?.metadata.finalizers).toEqual(['orphan']);
    expect(await gc.pass()).toEqual({ deleted: ['OwnedAccessKey/b-made'], orphaned: [], released: ['OwnedAccessKey/a-login'] });
  });

  it('Orphan on two owners of one key: the second waits for the next pass, and the key outlives both', async () => {
    const { registry, gc, exists, userKey } = world();
    const { object: a } = await registry.teams.create(team('a'));
    const { object: b } = await registry.teams.create(team('b'));
    await userKey('shared', [a, b]);
    await registry.teams.delete('a', { propagationPolicy: 'Orphan' });
    await registry.teams.delete('b', { propagationPolicy: 'Orphan' });
    // The first owner's orphaning rewrites the key; the second's guarded write of it loses.
    expect(await gc.pass()).toEqual({ deleted: [], orphaned: ['OwnedAccessKey/shared'], released: ['Team/a'] });
    expect(await exists('teams', 'b')).toBeDefined();
    expect(await gc.pass()).toEqual({ deleted: [], orphaned: ['OwnedAccessKey/shared'], released: ['Team/b'] });
    expect(await gc.pass()).toEqual({ deleted: [], orphaned: [], released: [] });
    expect((await exists('ownedaccesskeys', 'shared'))?.metadata.ownerReferences).toBeUndefined();
  });

  it('a write that fails for another reason than a race fails the pass, and the next pass does it', async () => {
    const { registry, store, gc, exists, userKey } = world();
    const { object: t } = await registry.teams.create(team('t'));
    await userKey('k', [t]);
    await registry.teams.delete('t', { propagationPolicy: 'Orphan' });
    const update = store.guaranteedUpdate.bind(store) as (key: string, ...rest: unknown[]) => Promise<unknown>;
    let failed = 0;
    store.guaranteedUpdate = ((key: string, ...rest: unknown[]) => {
      if (failed++ === 0) return Promise.reject(new StorageError('Unreachable', key, 'connection reset'));
      return update(key, ...rest);
    }) as typeof store.guaranteedUpdate;
    await expect(gc.pass()).rejects.toMatchObject({ code: 503 });
    expect(await exists('teams', 't')).toBeDefined();
    expect(await gc.pass()).toEqual({ deleted: [], orphaned: ['OwnedAccessKey/k'], released: ['Team/t'] });
  });

  it('Foreground: another owner that is itself waiting for its dependents does not keep the dependent', async () => {
    const { registry, gc, exists, userKey } = world();
    const { object: a } = await registry.teams.create(team('a'));
    const { object: b } = await registry.teams.create(team('b'));
    await userKey('shared', [a, b]);
    await registry.teams.delete('a', { propagationPolicy: 'Foreground' });
    await registry.teams.delete('b', { propagationPolicy: 'Foreground' });
    expect((await gc.pass()).deleted).toEqual(['OwnedAccessKey/shared']);
    expect(await exists('ownedaccesskeys', 'shared')).toBeUndefined();
  });

  it("releasing an owner takes only the collector's finalizer off: another's keeps it terminating", async () => {
    const { registry, gc, exists, userKey } = world();
    const { object: t } = await registry.teams.create(team('t', {}, { finalizers: ['example.com/hold'] }));
    await userKey('k', [t]);
    await registry.teams.delete('t', { propagationPolicy: 'Orphan' });
    expect(await gc.pass()).toEqual({ deleted: [], orphaned: ['OwnedAccessKey/k'], released: ['Team/t'] });
    const held = await exists('teams', 't');
    expect(held?.metadata.finalizers).toEqual(['example.com/hold']);
    expect(held?.metadata.deletionTimestamp).toBeDefined();
  });
});
