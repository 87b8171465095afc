/**
 * /readyz needs no key, and each ask pinged the store (a database round trip on PostgreSQL): a flood
 * of asks made as many pings at once. Asks while a ping is out now share it; none is kept after it
 * answers, so a store that just failed is unready at the next ask.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { MemoryStore } from '../../src/store/backends/memory.js';
import type { Store } from '../../src/store/types.js';
import { registerHealthRoutes } from '../../src/server/routes/health.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

/** A store whose ping takes 100 ms, counting the pings at once, and failing when told. */
class SlowPing extends MemoryStore {
  pings = 0;
  atOnce = 0;
  most = 0;
  failing = false;
  override async ping(): Promise<void> {
    this.pings++;
    this.most = Math.max(this.most, ++this.atOnce);
    await new Promise((r) => setTimeout(r, 100));
    this.atOnce--;
    if (this.failing) throw new Error('the store does not answer');
    return super.ping();
  }
}

describe('/readyz under many asks', () => {
  let server: InProcess;
  const store = new SlowPing();
  const readyz = () => fetch(`${server.base}/readyz`);
  beforeAll(async () => {
    server = await startInProcess({ store });
  });
  afterAll(() => server.close());

  it('thirty asks at once: each answered ok, the store pinged once at a time', async () => {
    store.pings = 0;
    const statuses = await Promise.all(Array.from({ length: 30 }, async () => (await readyz()).status));
    expect(statuses).toEqual(Array(30).fill(200));
    expect(store.most).toBe(1);
    expect(store.pings).toBeLessThanOrEqual(3);
  });

  it('a store that fails is unready at the next ask, and ready at the next once it answers', async () => {
    expect((await readyz()).status).toBe(200);
    store.failing = true;
    expect((await readyz()).status).toBe(503);
    store.failing = false;
    expect((await readyz()).status).toBe(200);
  });

  it('a ping that does not answer in time is a 503, and the next ask pings again rather than wait on it', async () => {
    const app = Fastify();
    let pings = 0;
    const stuck = { ping: () => (++pings === 1 ? new Promise<void>(() => {}) : Promise.resolve()) } as unknown as Store;
    registerHealthRoutes(app, stuck, '0.0.0', 200);
    try {
      const first = await app.inject({ method: 'GET', url: '/readyz' });
      expect(first.statusCode).toBe(503);
      const second = await app.inject({ method: 'GET', url: '/readyz' });
      expect([second.statusCode, second.body, pings]).toEqual([200, 'ok', 2]);
    } finally {
      await app.close();
    }
  });
});

