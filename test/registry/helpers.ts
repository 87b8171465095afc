import { expect } from 'vitest';
import { ApiError, type Status } from '../../src/api/errors.js';
import type { KubeObject, WatchEvent } from '../../src/api/types.js';
import type { RegistryWatch } from '../../src/registry/watch.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import type { Store, StoredObject, StoreWatch } from '../../src/store/types.js';
import { createRegistry, type Registry } from '../../src/registry/registry.js';

export { accessKey, apiVersion, team } from '../support/manifests.js';

/** A clock tests move by hand. */
export class TestClock {
  constructor(public time = Date.parse('2026-01-01T00:00:00Z')) {}
  now = () => new Date(this.time);
  advance(seconds: number): void {
    this.time += seconds * 1000;
  }
}

export function newRegistry(opts: { store?: Store; generateName?: (p: string) => string } = {}) {
  const store = opts.store ?? new MemoryStore();
  const clock = new TestClock();
  const registry: Registry = createRegistry(store, {
    now: clock.now,
    ...(opts.generateName ? { generateName: opts.generateName } : {}),
  });
  return { registry, store, clock };
}

/** Awaits a promise that must fail with an ApiError, and returns its Status body. */
export async function statusOf(p: Promise<unknown>): Promise<Status> {
  const err = await p.then(
    (v) => {
      throw new Error(`expected an ApiError, got success: ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
  expect(err, String(err)).toBeInstanceOf(ApiError);
  const status = (err as ApiError).toStatus();
  expect(status).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure' });
  return status;
}

/** The fields named by a Status's causes. */
export const causeFields = (s: Status) => (s.details?.causes ?? []).map((c) => c.field);

export const spec = (o: KubeObject) => o.spec as Record<string, unknown>;

/** The next n events of a watch (fewer if it ends or the time runs out); the watch is stopped after. */
export async function take(w: RegistryWatch, n: number, timeoutMs = 3000): Promise<WatchEvent<KubeObject | Status>[]> {
  const out: WatchEvent<KubeObject | Status>[] = [];
  const timer = setTimeout(() => w.stop(), timeoutMs);
  for await (const e of w) {
    out.push(e);
    if (out.length === n) break;
  }
  clearTimeout(timer);
  w.stop();
  return out;
}

/** A store that tells when a watch of it starts, and counts the watches not stopped. */
export class CountingStore extends MemoryStore {
  open = 0;
  onWatch: () => void = () => {};
  override watch<T extends StoredObject>(prefix: string, fromRevision: number): StoreWatch<T> {
    const sw = super.watch<T>(prefix, fromRevision);
    this.open++;
    let stopped = false;
    const stop = sw.stop.bind(sw);
    sw.stop = () => {
      if (!stopped) this.open--;
      stopped = true;
      stop();
    };
    this.onWatch();
    return sw;
  }
}
