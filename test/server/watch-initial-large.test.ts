/**
 * A watch without a resourceVersion first sends every object as ADDED. More objects than the
 * watch's queue holds (10,000) must still all arrive, fed to the queue as the client takes them,
 * and the watch must then go on with changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, adminKey, type InProcess } from './in-process.js';
import { openWatch, type Watching } from './watch-client.js';

const teams = 10_050;

describe('a watch whose initial list is larger than its queue', () => {
  let server: InProcess;
  let watch: Watching | undefined;
  beforeAll(async () => {
    server = await startInProcess({ garbageCollector: false });
    // Straight through the registry, a hundred at a time: fast, and the same objects HTTP would make.
    for (let i = 0; i < teams; i += 100) {
      const batch: Promise<unknown>[] = [];
      for (let j = i; j < Math.min(teams, i + 100); j++) batch.push(server.registry.teams.create({ metadata: { name: `t${j}` } }));
      await Promise.all(batch);
    }
  }, 120_000);
  afterAll(async () => {
    watch?.close();
    await server.close();
  });

  it('sends every object as ADDED, then stays open and sends the next change', async () => {
    watch = await openWatch(`${server.api}/teams?watch=true`, adminKey);
    expect(watch.status).toBe(200);
    const names = new Set<string>();
    const deadline = Date.now() + 30_000;
    while (watch.endedAt === undefined && Date.now() < deadline) {
      for (const e of watch.events) if (e.type === 'ADDED' && e.object.metadata?.name?.startsWith('t')) names.add(e.object.metadata.name);
      if (names.size >= teams) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(watch.events.filter((e) => e.type === 'ERROR')).toEqual([]);
    expect(names.size).toBe(teams);
    expect(watch.endedAt).toBeUndefined();

    const created = await server.fetch(`${server.api}/teams`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'after-the-list' } }),
    });
    expect(created.status).toBe(201);
    expect(await watch.next((e) => e.type === 'ADDED' && e.object.metadata?.name === 'after-the-list', 5000)).toBeDefined();
    expect(watch.endedAt).toBeUndefined();
  }, 60_000);
});
