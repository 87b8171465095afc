/**
 * Group commit through the API: concurrent creates that land in one batch of the writer thread
 * each get their own answer (a duplicate name its 409, a key value already taken its 422), a
 * refused write takes no revision, revisions stay dense and ordered, watchers see them in order,
 * and the batch shares its fsyncs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { buildSyncLog } from '../fixtures/fsync-shims.js';
import { readEvents } from './in-process.js';
import { startServe, type Served } from './serve-process.js';

const adminKey = `GroupCommit${'g'.repeat(50)}`;
const auth = { Authorization: `Bearer ${adminKey}` };
const json = { ...auth, 'Content-Type': 'application/json' };

describe('group commit of concurrent creates (SQLite writer thread)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-group-'));
  const db = join(dir, 'store.db');
  const syncs = buildSyncLog();
  const walSyncs = () => syncs.lines().filter((l) => l.endsWith(` ${db}-wal`)).length;
  let server: Served;
  let api: string;

  beforeAll(async () => {
    server = await startServe(['--store', `sqlite:${db}`, '--insecure-http', '--log-level', 'warn'], { env: { TEAMKEYS_ADMIN_KEY: adminKey, ...syncs.env } });
    api = `${server.url}/apis/management.service/v1`;
    // The key's first use records its activity (a write of its own): let it happen first.
    expect((await fetch(`${api}/teams`, { headers: auth })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers each write on its own, keeps revisions dense and ordered, and watchers see them in order', async () => {
    const start = (await (await fetch(`${api}/teams`, { headers: auth })).json()) as { metadata: { resourceVersion: string } };
    const from = Number(start.metadata.resourceVersion);
    const teamWatch = await fetch(`${api}/teams?watch=true&resourceVersion=${from}`, { headers: auth });
    const keyWatch = await fetch(`${api}/ownedaccesskeys?watch=true&resourceVersion=${from}`, { headers: auth });
    const syncsBefore = walSyncs();

    // 30 distinct teams, 10 of them sent twice; 4 key values each claimed by 3 keys.
    const teams = Array.from({ length: 40 }, (_, i) => `team-${i % 30}`);
    const keys = Array.from({ length: 12 }, (_, i) => ({ name: `key-${i}`, value: `Shared${String(i % 4).repeat(44)}` }));
    const sent = [
      ...teams.map((name) => ({ kind: 'team', name, res: fetch(`${api}/teams`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, spec: { users: ['ana'] } }) }) })),
      ...keys.map((k) => ({ kind: 'key', name: k.name, res: fetch(`${api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: k.name }, spec: { user: 'ana', key: k.value } }) }) })),
    ];
    const answers = await Promise.all(sent.map(async (s) => ({ ...s, status: (await s.res).status, body: (await (await s.res).json()) as { reason?: string; metadata?: { name: string; resourceVersion: string } } })));

    const byTeam = new Map<string, number[]>();
    for (const a of answers.filter((a) => a.kind === 'team')) byTeam.set(a.name, [...(byTeam.get(a.name) ?? []), a.status]);
    for (const [name, codes] of byTeam) expect(codes.sort(), name).toEqual(Number(name.slice(5)) < 10 ? [201, 409] : [201]);
    for (const a of answers.filter((a) => a.status === 409)) expect(a.body.reason).toBe('AlreadyExists');
    for (let v = 0; v < 4; v++) {
      const group = answers.filter((a) => a.kind === 'key' && Number(a.name.slice(4)) % 4 === v);
      expect(group.map((a) => a.status).sort(), `key value ${v}`).toEqual([201, 422, 422]);
    }
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(34);

    // Every 201 is stored at the revision it was answered with, and the refused writes took none:
    // the log from `from` on is dense, one row per acknowledged create (and whatever else the
    // server wrote meanwhile, such as the key's activity), each revision once.
    const store = new SqliteStore(db);
    try {
      const current = await store.currentRevision();
      const log = store.watch('/', from);
      const revisions: number[] = [];
      const timer = setTimeout(() => log.stop(), 10_000);
      for await (const e of log) {
        revisions.push(e.revision);
        if (e.revision >= current) break;
      }
      clearTimeout(timer);
      log.stop();
      expect(revisions).toEqual(Array.from({ length: current - from }, (_, i) => from + 1 + i));
      for (const a of created) {
        const key = a.kind === 'team' ? `/teams/${a.name}` : `/ownedaccesskeys/${a.name}`;
        expect((await store.get(key)).metadata?.resourceVersion, key).toBe(a.body.metadata!.resourceVersion);
      }
    } finally {
      await store.close();
    }

    for (const [res, kind] of [[teamWatch, 'team'], [keyWatch, 'key']] as const) {
      const expected = created.filter((a) => a.kind === kind);
      const events = await readEvents(res, expected.length, 10_000);
      const rvs = events.map((e) => Number((e.object.metadata as { resourceVersion: string }).resourceVersion));
      expect(rvs, `${kind} watch in revision order`).toEqual([...rvs].sort((a, b) => a - b));
      expect(events.map((e) => e.type)).toEqual(expected.map(() => 'ADDED'));
      expect(new Set(rvs)).toEqual(new Set(expected.map((a) => Number(a.body.metadata!.resourceVersion))));
    }

    const flushed = walSyncs() - syncsBefore;
    process.stdout.write(`group commit: ${answers.length} concurrent creates (${created.length} acknowledged) flushed the WAL ${flushed} times\n`);
    // Each acknowledged create and its audit record would take a flush each if committed one by one.
    expect(flushed).toBeLessThan(created.length);
  });
});
