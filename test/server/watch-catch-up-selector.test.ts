/**
 * A watch from a resourceVersion further back than its queue holds (10,000 events): kube-apiserver
 * answers 200 at once and streams the catch-up as the client reads it. The catch-up used to be
 * pushed into the store watch's queue all at once, which overflowed it before the client could read
 * anything: the watch ended at once with an ERROR 410 "fell too far behind", with a field selector
 * matching one key as without one.
 */
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { openWatch } from './watch-client.js';

const keys = 15_000;

/** A watch of the keys over the test's own connections; waits (`until`) stop early at its end or an ERROR. */
async function watchKeys(server: InProcess, agent: Agent, query: string) {
  const w = await openWatch(`${server.api}/ownedaccesskeys?${query}`, adminKey, { agent });
  const until = async (done: () => boolean, ms = 60_000) => {
    const deadline = Date.now() + ms;
    while (!done() && w.endedAt === undefined && !w.events.some((e) => e.type === 'ERROR') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };
  return { ...w, until, ended: () => w.endedAt !== undefined };
}

describe(`a watch from a resourceVersion ${keys} events back`, () => {
  let server: InProcess;
  let agent: Agent;
  let from = '';
  beforeAll(async () => {
    server = await startInProcess({ garbageCollector: false });
    agent = new Agent();
    from = String(await server.registry.currentRevision());
    // Straight through the registry, a hundred at a time: fast, and the same objects HTTP would make.
    for (let i = 0; i < keys; i += 100) {
      const batch: Promise<unknown>[] = [];
      for (let j = i; j < Math.min(keys, i + 100); j++) batch.push(server.registry.ownedaccesskeys.create({ metadata: { name: `k${j}` }, spec: { user: `u${j % 10}` } }, { fieldManager: 'test' }));
      await Promise.all(batch);
    }
  }, 120_000);
  afterAll(async () => {
    // The test's own kept-alive connections would hold the server's close.
    await agent.destroy();
    await server.close();
  });

  it('with a field selector: 200 at once, the one matching key, then live changes; no 410', async () => {
    const name = `k${keys - 7}`;
    const w = await watchKeys(server, agent, `watch=true&resourceVersion=${from}&fieldSelector=metadata.name%3D${name}`);
    expect(w.status).toBe(200);
    await w.until(() => w.events.length > 0);
    expect(w.events).toEqual([expect.objectContaining({ type: 'ADDED', object: expect.objectContaining({ metadata: expect.objectContaining({ name }) }) })]);
    // The catch-up is over once a change made now arrives: its deletion, and nothing else.
    await server.registry.ownedaccesskeys.delete(name);
    await w.until(() => w.events.length > 1);
    expect(w.events.map((e) => `${e.type} ${e.object.metadata?.name ?? e.object.message}`)).toEqual([`ADDED ${name}`, `DELETED ${name}`]);
    expect(w.ended()).toBe(false);
    w.close();
  }, 120_000);

  it('without a selector: every key created since, in order, and the stream stays open', async () => {
    const w = await watchKeys(server, agent, `watch=true&resourceVersion=${from}`);
    expect(w.status).toBe(200);
    await w.until(() => w.events.length >= keys);
    expect(w.events.filter((e) => e.type === 'ERROR')).toEqual([]);
    const added = w.events.slice(0, keys).map((e) => `${e.type} ${e.object.metadata?.name}`);
    expect(added).toEqual(Array.from({ length: keys }, (_, i) => `ADDED k${i}`));
    expect(w.ended()).toBe(false);
    w.close();
  }, 120_000);
});
