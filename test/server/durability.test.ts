/**
 * Nothing acknowledged is lost: `teamkeys serve` on SQLite is killed with SIGKILL at random moments
 * while clients write through the API, then restarted on the same file; and clients racing on one
 * object through read-modify-PUT and JSON patches lose no increment.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { root } from '../support/cli.js';
import { buildSyncLog, powerCutEnv } from '../fixtures/fsync-shims.js';
import { testSeed, seededRandom } from '../support/seeded-random.js';
import { startServe, type Served } from '../support/serve-process.js';

const adminKey = `Durability${'d'.repeat(50)}`;
const auth = { Authorization: `Bearer ${adminKey}` };
const json = { ...auth, 'Content-Type': 'application/json' };
/** The crash points (how long after the first acknowledgement each kill comes) follow this seed; TEAMKEYS_TEST_SEED replays another. */
const seed = testSeed(2029);
const crashDelays = (n: number) => {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => Math.floor(random() * 400));
};
const users = Array.from({ length: 20 }, (_, i) => `user-${i}`);

interface Ack {
  name: string;
  revision: number;
}

/** Creates teams from `writers` concurrent clients until the server goes away; returns the 201s. */
async function writeUntilGone(api: string, prefix: string, writers: number, onFirstAck: () => void): Promise<Ack[]> {
  const acks: Ack[] = [];
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let n = 0; ; n++) {
        const name = `${prefix}-${w}-${n}`;
        try {
          const res = await fetch(`${api}/teams`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, spec: { displayName: name, users } }) });
          if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${await res.text()}`);
          const body = (await res.json()) as { metadata: { resourceVersion: string } };
          acks.push({ name, revision: Number(body.metadata.resourceVersion) });
          if (acks.length === 1) onFirstAck();
        } catch (err) {
          if ((err as Error).message.startsWith('create ')) throw err;
          return; // the connection died with the server: this write was never acknowledged
        }
      }
    }),
  );
  return acks;
}

describe('durability and concurrency through the HTTP API', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-kill-'));
  const store = `sqlite:${join(dir, 'store.db')}`;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const serve = () => startServe(['--store', store, '--insecure-http', '--log-level', 'warn'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
  const apiOf = (s: Served) => `${s.url}/apis/management.service/v1`;

  it('the served process runs SQLite in WAL mode with synchronous=FULL, read back from its live connection', async () => {
    // synchronous is a setting of the connection, never stored in the file: only the serving process can tell.
    const server = await startServe(['--store', `sqlite:${join(dir, 'pragmas.db')}`, '--insecure-http'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    try {
      const line = server.stderr().split('\n').find((l) => l.includes('"msg":"SQLite store opened"'));
      expect(line, server.stderr()).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ journalMode: 'wal', synchronous: 'FULL' });
    } finally {
      await server.stop();
    }
  });

  it('acknowledges each create only after the WAL holding it was fsynced (an LD_PRELOAD shim records every fsync); NORMAL would not', async () => {
    // SIGKILL cannot tell FULL from NORMAL: the page cache survives the process. A power cut would
    // not, so what must hold is the order: the WAL is flushed before the 201 is sent.
    const syncs = buildSyncLog();
    const walSyncs = (db: string) => syncs.lines().filter((l) => l.endsWith(` ${db}-wal`)).length;
    const db = join(dir, 'synced.db');
    const server = await startServe(['--store', `sqlite:${db}`, '--insecure-http', '--log-level', 'warn'], { env: { TEAMKEYS_ADMIN_KEY: adminKey, ...syncs.env } });
    try {
      // The key's first use records its activity (a write of its own); let it happen before counting.
      expect((await fetch(`${apiOf(server)}/teams`, { headers: auth })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 500));
      for (let i = 0; i < 10; i++) {
        const before = walSyncs(db);
        const res = await fetch(`${apiOf(server)}/teams`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: `synced-${i}` } }) });
        expect(res.status).toBe(201);
        expect(walSyncs(db), `create ${i} was acknowledged before its WAL was flushed`).toBeGreaterThan(before);
      }
    } finally {
      await server.stop();
    }
    // The contrast that shows the check can fail: 10 commits under NORMAL flush the WAL at most at checkpoints.
    const normalDb = join(dir, 'normal.db');
    const script = `import { SqliteStore } from ${JSON.stringify(`${root}dist/store/backends/sqlite.js`)};
      const s = new SqliteStore(process.argv[1], { synchronous: 'NORMAL' });
      for (let i = 0; i < 10; i++) await s.create('/teams/n' + i, { metadata: { name: 'n' + i } });
      await s.close();`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, normalDb], { env: { ...process.env, ...syncs.env }, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    process.stdout.write(`fsync: 10 creates through the API flushed the WAL ${walSyncs(db)} times; 10 commits under NORMAL, ${walSyncs(normalDb)} times\n`);
    expect(walSyncs(normalDb)).toBeLessThan(10);
  });

  it(`keeps every acknowledged write over 5 simulated power cuts (unsynced writes dropped, then SIGKILL); NORMAL would lose them (seed ${seed})`, async () => {
    const delays = crashDelays(5);
    const db = realpathSync(dir) + '/power.db';
    const env = powerCutEnv(db);
    const serveCut = () => startServe(['--store', `sqlite:${db}`, '--insecure-http', '--log-level', 'warn'], { env: { TEAMKEYS_ADMIN_KEY: adminKey, ...env } });
    const acked: Ack[] = [];
    for (let cycle = 0; cycle < 5; cycle++) {
      const server = await serveCut();
      let firstAck!: () => void;
      const acknowledged = new Promise<void>((r) => (firstAck = r));
      const writing = writeUntilGone(apiOf(server), `p${cycle}`, 4, () => firstAck());
      await Promise.race([acknowledged, writing]);
      await new Promise((r) => setTimeout(r, delays[cycle]));
      server.process.kill('SIGKILL');
      acked.push(...(await writing));
      await server.stop();
    }
    // Read back without the shim: the file holds only what was fsynced before each cut.
    const check = await startServe(['--store', `sqlite:${db}`, '--insecure-http', '--log-level', 'warn'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    try {
      const list = (await (await fetch(`${apiOf(check)}/teams`, { headers: auth })).json()) as { items: { metadata: { name: string; resourceVersion: string } }[] };
      const byName = new Map(list.items.map((i) => [i.metadata.name, i.metadata.resourceVersion]));
      process.stdout.write(`power cuts: ${acked.length} acknowledged creates over 5 cuts, ${acked.filter((a) => byName.get(a.name) !== String(a.revision)).length} lost\n`);
      expect(acked.length).toBeGreaterThan(5);
      expect(acked.filter((a) => byName.get(a.name) !== String(a.revision)).map((a) => a.name), `lost with crash delays ${delays.join(', ')} ms (seed ${seed})`).toEqual([]);
    } finally {
      await check.stop();
    }
    // The contrast that shows the shim does drop data: 10 commits acknowledged under NORMAL, then the cut.
    const normalDb = realpathSync(dir) + '/power-normal.db';
    const store = JSON.stringify(`${root}dist/store/backends/sqlite.js`);
    const write = `import { SqliteStore } from ${store};
      const s = new SqliteStore(process.argv[1], { synchronous: 'NORMAL' });
      for (let i = 0; i < 10; i++) await s.create('/teams/n' + i, { metadata: { name: 'n' + i } });
      process.kill(process.pid, 'SIGKILL');`;
    spawnSync(process.execPath, ['--input-type=module', '-e', write, normalDb], { env: { ...process.env, ...powerCutEnv(normalDb) } });
    const read = `import { SqliteStore } from ${store};
      const s = new SqliteStore(process.argv[1]);
      process.stdout.write(String((await s.list('/teams/')).items.length));
      await s.close();`;
    const survived = spawnSync(process.execPath, ['--input-type=module', '-e', read, normalDb], { encoding: 'utf8' });
    expect(survived.stdout, survived.stderr).not.toBe('10');
  }, 120_000);

  it(`keeps every acknowledged write over 20 SIGKILLs of the server under concurrent writers (seed ${seed})`, async () => {
    const delays = crashDelays(20);
    const acked: Ack[] = [];
    let lastRevision = 0;
    let server = await serve();
    for (let cycle = 0; cycle < 20; cycle++) {
      let firstAck!: () => void;
      const acknowledged = new Promise<void>((r) => (firstAck = r));
      const writing = writeUntilGone(apiOf(server), `c${cycle}`, 6, () => firstAck());
      // Killed at a random moment once writes are flowing, however slow the machine is.
      await Promise.race([acknowledged, writing]);
      await new Promise((r) => setTimeout(r, delays[cycle]));
      server.process.kill('SIGKILL');
      const acks = await writing;
      await server.stop();
      expect(acks.length, `cycle ${cycle} acknowledged nothing before the kill (seed ${seed})`).toBeGreaterThan(0);
      // Revisions only grow, across restarts too.
      expect(Math.min(...acks.map((a) => a.revision)), `revisions went back after cycle ${cycle} (seed ${seed})`).toBeGreaterThan(lastRevision);
      lastRevision = Math.max(...acks.map((a) => a.revision));
      acked.push(...acks);

      server = await serve();
      const list = (await (await fetch(`${apiOf(server)}/teams`, { headers: auth })).json()) as {
        metadata: { resourceVersion: string };
        items: { metadata: { name: string; resourceVersion: string }; spec: { displayName: string; users: string[] } }[];
      };
      expect(Number(list.metadata.resourceVersion)).toBeGreaterThanOrEqual(lastRevision);
      const byName = new Map(list.items.map((i) => [i.metadata.name, i]));
      const missing = acked.filter((a) => !byName.has(a.name)).map((a) => a.name);
      expect(missing, `acknowledged but missing after cycle ${cycle}, killed ${delays[cycle]} ms after the first acknowledgement (seed ${seed})`).toEqual([]);
      for (const a of acked) {
        const item = byName.get(a.name)!;
        // Whole, as acknowledged: same revision, every field there.
        expect(item.metadata.resourceVersion).toBe(String(a.revision));
        expect(item.spec).toEqual({ displayName: a.name, users });
      }
    }
    await server.stop();
    expect(acked.length).toBeGreaterThan(100);
  }, 180_000);

  it('loses no increment when clients race with read-modify-PUT and JSON patches with test; every loser is told', async () => {
    const server = await serve();
    const url = `${apiOf(server)}/teams/counter`;
    try {
      const created = await fetch(`${apiOf(server)}/teams`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'counter', annotations: { count: '0' } }, spec: { displayName: 'Counter' } }) });
      expect(created.status).toBe(201);
      const perClient = 12;
      const losers = { put: 0, testPatch: 0, versionPatch: 0 };
      const unexpected: string[] = [];
      const clients = 9;
      const patch = (ops: unknown[]) => fetch(url, { method: 'PATCH', headers: { ...auth, 'Content-Type': 'application/json-patch+json' }, body: JSON.stringify(ops) });
      await Promise.all(
        Array.from({ length: clients }, async (_, c) => {
          const style = (['put', 'testPatch', 'versionPatch'] as const)[c % 3]!;
          for (let done = 0; done < perClient; ) {
            const current = (await (await fetch(url, { headers: auth })).json()) as { metadata: { resourceVersion: string; annotations: { count: string } } };
            const count = Number(current.metadata.annotations.count);
            const next = { op: 'replace', path: '/metadata/annotations/count', value: String(count + 1) };
            let res: Response;
            if (style === 'put') {
              current.metadata.annotations.count = String(count + 1);
              res = await fetch(url, { method: 'PUT', headers: json, body: JSON.stringify(current) });
            } else if (style === 'testPatch') {
              res = await patch([{ op: 'test', path: '/metadata/annotations/count', value: String(count) }, next]);
            } else {
              // The resourceVersion read, written back: a precondition, as in a PUT.
              res = await patch([{ op: 'replace', path: '/metadata/resourceVersion', value: current.metadata.resourceVersion }, next]);
            }
            if (res.ok) {
              done++;
              continue;
            }
            const status = (await res.json()) as { reason: string; message: string };
            // Losers are told as kube-apiserver tells them: a stale resourceVersion is 409 Conflict;
            // a failed JSON patch `test` is kube's generic 422 (it names no operation).
            if (style !== 'testPatch' && res.status === 409 && status.reason === 'Conflict') losers[style]++;
            else if (style === 'testPatch' && res.status === 422 && status.reason === 'Invalid' && status.message === 'the server rejected our request due to an error in our request') losers.testPatch++;
            else unexpected.push(`${style}: ${res.status} ${status.reason}: ${status.message}`);
          }
        }),
      );
      expect(unexpected).toEqual([]);
      const final = (await (await fetch(url, { headers: auth })).json()) as { metadata: { annotations: { count: string } } };
      expect(Number(final.metadata.annotations.count)).toBe(clients * perClient);
      // With nine clients on one object, some of each kind must have lost.
      expect(losers.put).toBeGreaterThan(0);
      expect(losers.testPatch).toBeGreaterThan(0);
      expect(losers.versionPatch).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
