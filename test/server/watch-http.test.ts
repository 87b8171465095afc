import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents, startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const post = (server: InProcess, name: string, labels: Record<string, string> = {}) =>
  server.fetch(`${server.api}/teams`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name, labels } }) });

describe('watch over HTTP', () => {
  let server: InProcess;
  beforeAll(async () => {
    server = await startInProcess({ bookmarkIntervalMs: 100 });
  });
  afterAll(() => server.close());

  it('streams newline-delimited events in revision order from a resourceVersion', async () => {
    const rv = ((await (await server.fetch(`${server.api}/teams`)).json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const res = await server.fetch(`${server.api}/teams?watch=true&resourceVersion=${rv}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    await post(server, 'w1');
    await server.fetch(`${server.api}/teams/w1`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"spec":{"users":["a"]}}' });
    await server.fetch(`${server.api}/teams/w1`, { method: 'DELETE' });
    const events = await readEvents(res, 3);
    expect(events.map((e) => [e.type, (e.object.metadata as { name: string }).name])).toEqual([
      ['ADDED', 'w1'],
      ['MODIFIED', 'w1'],
      ['DELETED', 'w1'],
    ]);
    const rvs = events.map((e) => Number((e.object.metadata as { resourceVersion: string }).resourceVersion));
    expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
  });

  it('without a resourceVersion starts with the current objects, filtered by the label selector', async () => {
    await post(server, 'prod-a', { env: 'prod' });
    await post(server, 'dev-a', { env: 'dev' });
    const res = await server.fetch(`${server.api}/teams?watch=1&labelSelector=env%3Dprod`);
    const events = await readEvents(res, 1);
    expect(events.map((e) => [e.type, (e.object.metadata as { name: string }).name])).toEqual([['ADDED', 'prod-a']]);
  });

  it('sends Table events, each with its column definitions, when kubectl asks for tables', async () => {
    const res = await server.fetch(`${server.api}/teams?watch=true&fieldSelector=metadata.name%3Dtabled`, {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    await post(server, 'tabled');
    await server.fetch(`${server.api}/teams/tabled`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"spec":{"displayName":"T"}}' });
    const events = await readEvents(res, 2);
    expect(events.map((e) => [e.type, e.object.kind])).toEqual([
      ['ADDED', 'Table'],
      ['MODIFIED', 'Table'],
    ]);
    expect(events[0]!.object.columnDefinitions).toBeDefined();
    expect(events[1]!.object.columnDefinitions).toEqual(events[0]!.object.columnDefinitions);
    expect((events[1]!.object.rows as { cells: unknown[] }[])[0]!.cells.slice(0, 2)).toEqual(['tabled', 'T']);
  });

  it('sends bookmarks when allowed', async () => {
    const rv = ((await (await server.fetch(`${server.api}/teams`)).json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const events = await readEvents(await server.fetch(`${server.api}/teams?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`), 1);
    expect(events[0]).toEqual({ type: 'BOOKMARK', object: { apiVersion: 'management.service/v1', kind: 'Team', metadata: { resourceVersion: rv } } });
  });

  it('keeps the watch open for timeoutSeconds, delivering events, then ends it cleanly', async () => {
    const rv = ((await (await server.fetch(`${server.api}/teams`)).json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const started = Date.now();
    const res = await server.fetch(`${server.api}/teams?watch=true&timeoutSeconds=1&resourceVersion=${rv}`);
    expect(res.status).toBe(200);
    // A write while it is open arrives on it: the watch is live, not refused at once.
    await post(server, 'during-timeout');
    const body = await res.text();
    const elapsed = Date.now() - started;
    const events = body.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
    // Ended by the server's timer: no ERROR event, the body closed normally (text() resolved).
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'during-timeout']]);
    // Open about timeoutSeconds: a timer never fires early (the lower bound cannot flake); the upper bound only catches a watch that hangs.
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(10_000);
  });

  it('a revision older than the retained history is one ERROR event with a 410 Expired Status', async () => {
    await post(server, 'old');
    await server.registry.store.compact(await server.registry.store.currentRevision());
    const events = await readEvents(await server.fetch(`${server.api}/teams?watch=true&resourceVersion=1`), 2, 2000);
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe('ERROR');
    expect(events[0]!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });

  it('a watch from exactly one revision before the compacted one is 410 Expired; from the compacted one it streams what follows', async () => {
    await post(server, 'edge-a');
    await post(server, 'edge-b');
    const compacted = await server.registry.store.currentRevision();
    await server.registry.store.compact(compacted);
    await post(server, 'edge-c');
    const behind = await readEvents(await server.fetch(`${server.api}/teams?watch=true&resourceVersion=${compacted - 1}`), 2, 2000);
    expect(behind.map((e) => [e.type, (e.object as { code?: number; reason?: string }).code, (e.object as { reason?: string }).reason])).toEqual([['ERROR', 410, 'Expired']]);
    const at = await readEvents(await server.fetch(`${server.api}/teams?watch=true&resourceVersion=${compacted}`), 1, 2000);
    expect(at.map((e) => [e.type, (e.object.metadata as { name: string }).name])).toEqual([['ADDED', 'edge-c']]);
  });
});
