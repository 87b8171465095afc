/**
 * Every watcher of a change is sent the event encoded once (routes/watch.ts, registry/watch.ts):
 * what each watcher receives is still its own answer. Watchers of the same format get the same
 * bytes, a selector's watcher the version that matched, a Table watcher a Table, and a second
 * change after the first is sent as fresh to each of them.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readEvents, startInProcess, type InProcess } from '../support/in-process.js';

const tableAccept = 'application/json;as=Table;g=meta.k8s.io;v=v1';

describe('watch events encoded once for all their watchers', () => {
  let s: InProcess;
  beforeAll(async () => {
    s = await startInProcess();
  });
  afterAll(() => s.close());

  const post = (plural: string, body: unknown) => s.fetch(`${s.api}/${plural}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const patchTeam = (name: string, body: unknown) => s.fetch(`${s.api}/teams/${name}`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify(body) });
  const versionOf = async (res: Response) => ((await res.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;

  it('gives each watcher its own correct stream', async () => {
    const made = await post('teams', { metadata: { name: 'shared', labels: { env: 'prod' } }, spec: { displayName: 'Before' } });
    expect(made.status).toBe(201);
    const rv = await versionOf(made);
    const watch = (query: string, accept = 'application/json') => s.fetch(`${s.api}/teams?watch=true&resourceVersion=${rv}${query}`, { headers: { Accept: accept } });
    const [json1, json2, prod, table, yaml, partial] = await Promise.all([
      watch(''),
      watch('&fieldSelector=metadata.name%3Dshared'),
      watch('&labelSelector=env%3Dprod'),
      watch('', tableAccept),
      watch('', 'application/yaml'),
      watch('', 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1'),
    ]);
    for (const res of [json1, json2, prod, table, yaml, partial]) expect(res.status).toBe(200);

    const first = await versionOf(await patchTeam('shared', { metadata: { labels: { env: 'dev' } }, spec: { displayName: 'After' } }));
    const second = await versionOf(await patchTeam('shared', { spec: { displayName: 'Again' } }));

    const [a, b, c, t, y, m] = await Promise.all([readEvents(json1, 2), readEvents(json2, 2), readEvents(prod, 1), readEvents(table, 2), readEvents(yaml, 2), readEvents(partial, 2)]);
    expect(a.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED']);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    // A watch asked for in YAML streams JSON lines, as kube-apiserver's does (and did before).
    expect(JSON.stringify(y)).toBe(JSON.stringify(a));
    // Metadata only: its own line, no spec.
    expect(m.map((e) => e.object.kind)).toEqual(['PartialObjectMetadata', 'PartialObjectMetadata']);
    expect(m.every((e) => e.object.spec === undefined)).toBe(true);
    expect(a.map((e) => (e.object as { spec: { displayName: string } }).spec.displayName)).toEqual(['After', 'Again']);
    expect(a.map((e) => (e.object as { metadata: { resourceVersion: string } }).metadata.resourceVersion)).toEqual([first, second]);
    // The label selector's watcher: the team left it, sent as DELETED with the version it matched.
    expect(c).toHaveLength(1);
    expect(c[0]!.type).toBe('DELETED');
    expect(c[0]!.object).toMatchObject({ metadata: { labels: { env: 'prod' }, resourceVersion: first }, spec: { displayName: 'Before' } });
    // kubectl get --watch's Table, a row per event.
    expect(t.map((e) => (e.object as { kind: string }).kind)).toEqual(['Table', 'Table']);
    expect(t.map((e) => (e.object as { rows: { cells: unknown[] }[] }).rows[0]!.cells[0])).toEqual(['shared', 'shared']);
  });

  it('sends a watcher far behind (past the 256 lines kept) every change as it was', async () => {
    const rv = await versionOf(await post('teams', { metadata: { name: 'behind' }, spec: { displayName: 'v0' } }));
    const live = await s.fetch(`${s.api}/teams?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dbehind`);
    const writes = 300;
    for (let i = 1; i <= writes; i++) {
      expect((await patchTeam('behind', { spec: { displayName: `v${i}` } })).status).toBe(200);
    }
    // The live watcher's lines were encoded as they happened; this one's, for the first 44 changes, long after.
    const late = await s.fetch(`${s.api}/teams?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dbehind`);
    const [a, b] = await Promise.all([readEvents(live, writes), readEvents(late, writes)]);
    const names = (events: typeof a) => events.map((e) => (e.object as { spec: { displayName: string } }).spec.displayName);
    const expected = Array.from({ length: writes }, (_, i) => `v${i + 1}`);
    expect(names(a)).toEqual(expected);
    expect(names(b)).toEqual(expected);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  });

  it('encodes a change once for all its watchers, and shows none of them a key value', async () => {
    const rv = await versionOf(await post('teams', { metadata: { name: 'once' }, spec: { displayName: 'v0' } }));
    const watchers = await Promise.all(Array.from({ length: 20 }, () => s.fetch(`${s.api}/teams?watch=true&resourceVersion=${rv}`)));
    const keyWatchers = await Promise.all(Array.from({ length: 3 }, () => s.fetch(`${s.api}/ownedaccesskeys?watch=true&resourceVersion=${rv}`)));
    const stringify = vi.spyOn(JSON, 'stringify');
    let events: Awaited<ReturnType<typeof readEvents>>[];
    let calls: unknown[][];
    try {
      expect((await patchTeam('once', { spec: { displayName: 'v1' } })).status).toBe(200);
      events = await Promise.all(watchers.map((w) => readEvents(w, 1)));
    } finally {
      calls = [...stringify.mock.calls];
      stringify.mockRestore();
    }
    expect(events.map((e) => (e[0]?.object as { spec?: { displayName?: string } } | undefined)?.spec?.displayName)).toEqual(Array(20).fill('v1'));
    // The server stringified the event once, not once per watcher.
    const encodings = calls.filter(([v]) => (v as { type?: string; object?: { metadata?: { name?: string } } } | null)?.type === 'MODIFIED' && (v as { object: { metadata: { name?: string } } }).object.metadata.name === 'once');
    expect(encodings).toHaveLength(1);

    const value = `Shared${'v'.repeat(58)}`;
    const key = await post('ownedaccesskeys', { metadata: { name: 'watched-key' }, spec: { user: 'ana', key: value } });
    expect(key.status).toBe(201);
    for (const w of keyWatchers) {
      const reader = w.body!.getReader();
      let text = '';
      while (!text.includes('watched-key')) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      expect(text).toContain('"type":"ADDED"');
      expect(text).not.toContain(value);
      expect(text).not.toContain('sealed');
    }
  });
});
