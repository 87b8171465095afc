/**
 * A registry's stop waits for the writes under way (in-flight.ts) before closing the audit trail
 * and the store: drained() is true once they settle, false when its bound runs out first.
 */
import { describe, expect, it } from 'vitest';
import { InFlight } from '../../src/registry/in-flight.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { team } from './helpers.js';

/** A promise settled by hand. */
function pending<T>() {
  let settle!: { ok: (v: T) => void; fail: (e: unknown) => void };
  const promise = new Promise<T>((ok, fail) => (settle = { ok, fail }));
  return { promise, ...settle };
}

describe('writes in flight', () => {
  it('drained is true at once when nothing is under way, and once every write settled, failed ones too', async () => {
    const inFlight = new InFlight();
    expect(await inFlight.drained(10)).toBe(true);
    const a = pending<string>();
    const b = pending<string>();
    expect(inFlight.track(a.promise)).toBe(a.promise);
    inFlight.track(b.promise).catch(() => {});
    const results: boolean[] = [];
    const waiting = [inFlight.drained(60_000), inFlight.drained(60_000)].map((p) => p.then((r) => results.push(r)));
    a.ok('done');
    await a.promise;
    await new Promise((r) => setImmediate(r));
    expect(results).toEqual([]); // b is still under way
    b.fail(new Error('refused'));
    await Promise.all(waiting);
    expect(results).toEqual([true, true]);
    expect(await inFlight.drained(10)).toBe(true);
  });

  it('drained is false when its bound runs out with a write still under way', async () => {
    const inFlight = new InFlight();
    const stuck = pending<void>();
    inFlight.track(stuck.promise);
    expect(await inFlight.drained(20)).toBe(false);
    stuck.ok();
    expect(await inFlight.drained(1_000)).toBe(true);
  });

  it("a registry's drained waits for the writes of every kind under way", async () => {
    const registry = createRegistry(new MemoryStore());
    let settled = 0;
    const writes = [registry.teams.create(team('a')), registry.ownedaccesskeys.create({ metadata: { name: 'k' }, spec: { user: 'u' } })].map((w) => w.then(() => settled++));
    expect(await registry.drained(60_000)).toBe(true);
    expect(settled).toBe(2);
    await Promise.all(writes);
  });
});
