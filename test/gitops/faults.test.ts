/**
 * The reconciler under faults, against a real `teamkeys serve`: the server dies in the middle of
 * an apply, another writer changes an object between plan and write, the git remote disappears.
 * A forwarding proxy on loopback decides the exact moment each fault happens.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { teamkeysAsync } from '../support/cli.js';
import { teamYaml } from '../support/manifests.js';
import { startServe, type Served } from '../support/serve-process.js';
import { newRepo } from './git-repo.js';

const adminKey = `Reconciler${'f'.repeat(50)}`;
const auth = { Authorization: `Bearer ${adminKey}` };

/** The built CLI, asynchronously: the proxy in this process must keep serving meanwhile. */
/** Forwards to `target()`; `before` runs ahead of each request and may decide to drop it. */
async function proxy(target: () => string, before: (req: IncomingMessage) => Promise<'forward' | 'drop'>): Promise<{ url: string; server: Server }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      void before(req).then((decision) => {
        if (decision === 'drop') return req.socket.destroy();
        const out = request(`${target()}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
          res.writeHead(up.statusCode!, up.headers);
          up.pipe(res);
        });
        // The server is gone: so is the connection, as a client talking to it directly would see.
        out.on('error', () => req.socket.destroy());
        out.end(Buffer.concat(chunks));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, server };
}

const team = (name: string) => teamYaml(name, { displayName: `Team ${name}`, users: [`${name}-lead`] });

describe('reconciler faults', () => {
  const work = mkdtempSync(join(tmpdir(), 'teamkeys-faults-'));
  const tokenFile = join(work, 'token');
  writeFileSync(tokenFile, `${adminKey}\n`);
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const serve = (store: string) => startServe(['--store', store, '--insecure-http', '--log-level', 'warn'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
  const apply = async (source: string, server: string, reports: string, ...extra: string[]) => {
    const r = await teamkeysAsync(['apply', '--source', source, '--source-id', 'faults', '--server', server, '--token-file', tokenFile, '--report-dir', reports, ...extra]);
    return { ...r, report: JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report };
  };
  const teamNames = async (served: Served) =>
    ((await (await fetch(`${served.url}/apis/management.service/v1/teams`, { headers: auth })).json()) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name).filter((n) => n.startsWith('t-'));

  it('the API dying in the middle of an apply: the report names what failed, and the next run completes it', async () => {
    const source = join(work, 'many');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(source);
    const names = Array.from({ length: 120 }, (_, i) => `t-${String(i).padStart(3, '0')}`);
    for (const n of names) writeFileSync(join(source, `${n}.yaml`), team(n));
    const store = `sqlite:${join(work, 'crash.db')}`;
    let served = await serve(store);
    let creates = 0;
    const front = await proxy(
      () => new URL(served.url).origin,
      async (req) => {
        if (req.method === 'POST' && ++creates === 40) {
          served.process.kill('SIGKILL');
          await served.stop();
        }
        return 'forward';
      },
    );
    try {
      const prefix = new URL(served.url).pathname;
      const broken = await apply(source, `${front.url}${prefix}`, join(work, 'r1'));
      expect(broken.code).toBe(1);
      expect(broken.report.outcome).toBe('failed');
      const failed = broken.report.objects.filter((o) => o.result === 'Failed');
      const created = broken.report.objects.filter((o) => o.result === 'Created');
      expect(failed.length).toBeGreaterThan(0);
      expect(created.length + failed.length + broken.report.objects.filter((o) => o.result === 'Skipped').length).toBe(120);
      expect(broken.report.summary.failed).toBe(failed.length);
      for (const f of failed) expect(f.error).toMatch(new RegExp(`^Team/${f.name}: create failed: `));

      served = await serve(store);
      // Everything acknowledged before the crash is there; the rest is not yet.
      const survived = await teamNames(served);
      for (const c of created) expect(survived).toContain(c.name);
      const again = await apply(source, served.url, join(work, 'r2'));
      expect(again.stderr).toBe('');
      expect(again.code).toBe(0);
      expect(again.report.outcome).toBe('applied');
      expect(again.report.summary.create).toBe(120 - survived.length);
      expect(again.report.summary.unchanged).toBe(survived.length);
      expect((await teamNames(served)).sort()).toEqual(names);
    } finally {
      front.server.close();
      await served.stop();
    }
  }, 90_000);

  it('a conflicting writer between plan and write: the apply re-plans that object and converges', async () => {
    const source = join(work, 'one');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(source);
    writeFileSync(join(source, 't-raced.yaml'), team('t-raced'));
    const served = await serve(`sqlite:${join(work, 'race.db')}`);
    const url = `${served.url}/apis/management.service/v1/teams/t-raced`;
    let raced = false;
    let patches = 0;
    const front = await proxy(
      () => new URL(served.url).origin,
      async (req) => {
        if (req.method === 'PATCH') patches++;
        if (req.method === 'PATCH' && !raced) {
          raced = true;
          // Someone else edits the object after the plan read it, before the apply's write lands.
          const res = await fetch(url, { method: 'PATCH', headers: { ...auth, 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { labels: { edited: 'by-hand' } }, spec: { users: ['intruder'] } }) });
          expect(res.status).toBe(200);
        }
        return 'forward';
      },
    );
    try {
      expect((await apply(source, served.url, join(work, 'r3'))).code).toBe(0);
      writeFileSync(join(source, 't-raced.yaml'), team('t-raced').replace('Team t-raced', 'Renamed in git'));
      const r = await apply(source, `${front.url}${new URL(served.url).pathname}`, join(work, 'r4'));
      expect(raced).toBe(true);
      // The first write lost the race (409 Conflict on its resourceVersion); the re-planned one landed.
      expect(patches).toBe(2);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.report.objects.find((o) => o.name === 't-raced')?.result).toBe('Updated');
      const live = (await (await fetch(url, { headers: auth })).json()) as { metadata: { labels?: Record<string, string> }; spec: { displayName: string; users: string[] } };
      // Git's fields won: its display name, and spec.users exactly git's (git owns who has access).
      // What the other writer added that grants nothing (a label) stays theirs.
      expect(live.spec.displayName).toBe('Renamed in git');
      expect(live.spec.users).toEqual(['t-raced-lead']);
      expect(live.metadata.labels).toEqual({ edited: 'by-hand' });
    } finally {
      front.server.close();
      await served.stop();
    }
  }, 60_000);

  it('an object changed between plan and prune is re-planned, not deleted', async () => {
    const source = join(work, 'prune-race');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(source);
    writeFileSync(join(source, 't-stays.yaml'), team('t-stays'));
    writeFileSync(join(source, 't-victim.yaml'), team('t-victim'));
    const served = await serve(`sqlite:${join(work, 'prune-race.db')}`);
    const url = `${served.url}/apis/management.service/v1/teams/t-victim`;
    const deletes: number[] = [];
    const front = await proxy(
      () => new URL(served.url).origin,
      async (req) => {
        if (req.method === 'DELETE' && deletes.length === 0) {
          // After the plan chose to prune it, someone protects the object.
          const res = await fetch(url, { method: 'PATCH', headers: { ...auth, 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { annotations: { 'gitops.management.service/prune': 'disabled' } } }) });
          expect(res.status).toBe(200);
        }
        if (req.method === 'DELETE') deletes.push(Date.now());
        return 'forward';
      },
    );
    try {
      expect((await apply(source, served.url, join(work, 'r6'))).code).toBe(0);
      rmSync(join(source, 't-victim.yaml'));
      const r = await apply(source, `${front.url}${new URL(served.url).pathname}`, join(work, 'r7'), '--prune');
      // The delete carried the planned resourceVersion: it lost with 409, and the re-plan saw the protection.
      expect(deletes).toHaveLength(1);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.report.objects.find((o) => o.name === 't-victim')).toMatchObject({
        action: 'delete',
        result: 'Skipped',
        note: 'changed on the server since the plan; re-planned: skip (not in the source; pruning disabled by gitops.management.service/prune)',
      });
      expect((await fetch(url, { headers: auth })).status).toBe(200);
    } finally {
      front.server.close();
      await served.stop();
    }
  }, 60_000);

  it('a git remote that disappears: the run fails clearly and nothing is written or pruned', async () => {
    const repo = await newRepo();
    const served = await serve(`sqlite:${join(work, 'git.db')}`);
    try {
      const first = await apply(repo.dir, served.url, join(work, 'r5'), '--ref', 'main', '--prune');
      expect(first.code).toBe(0);
      const before = await (await fetch(`${served.url}/apis/management.service/v1/teams`, { headers: auth })).json() as { items: unknown[]; metadata: { resourceVersion: string } };
      expect(before.items.length).toBeGreaterThan(0);
      rmSync(repo.dir, { recursive: true, force: true });
      const gone = await teamkeysAsync(['apply', '--source', repo.dir, '--ref', 'main', '--source-id', 'faults', '--server', served.url, '--token-file', tokenFile, '--prune']);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toMatch(new RegExp(`cannot read git source ${repo.dir} at main: .*does not exist`));
      const after = await (await fetch(`${served.url}/apis/management.service/v1/teams`, { headers: auth })).json() as { items: unknown[]; metadata: { resourceVersion: string } };
      expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      expect(after.items).toEqual(before.items);
    } finally {
      await served.stop();
      repo.cleanup();
    }
  }, 60_000);
});
