import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../src/daemon/webhook.js';
import type { Report } from '../../src/gitops/report/report.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { kubectl, kubectlPath, startServe, type Served } from '../server/serve-process.js';
import { eventually, metric, startWatch, type Watcher } from './watch-process.js';

describe('teamkeys watch: the daemon beside the API', () => {
  let served: Served;
  let repo: Repo;
  let work: string;
  const watchers: Watcher[] = [];
  const k = (...args: string[]) => kubectl(served, args);
  const has = (kind: string, name: string) => k('get', kind, name, '-o', 'name').code === 0;
  const target = () => ['--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')];
  const daemon = async (...args: string[]) => {
    const w = await startWatch(args);
    watchers.push(w);
    return w;
  };
  const report = (dir: string) => JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
    repo = await newRepo();
    work = mkdtempSync(join(tmpdir(), 'teamkeys-daemon-'));
    writeFileSync(join(work, 'secret'), 'hook-secret\n');
  });
  afterAll(async () => {
    for (const w of watchers) await w.stop();
    await served.stop();
    repo.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it('applies a new commit within seconds of a signed webhook call, and refuses an unsigned one', async () => {
    const reports = join(work, 'r1');
    const w = await daemon('--source', repo.dir, '--ref', 'main', '--source-id', 'd1', '--interval', '1h', '--webhook-secret-file', join(work, 'secret'), '--report-dir', reports, ...target());
    await eventually('the first sync is done', async () => (await fetch(`${w.url}/readyz`)).status === 200);
    expect(has('team', 'platform')).toBe(true);

    repo.write('teams/late.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: late-arrival\n');
    await repo.commit('a new team');
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const unsigned = await fetch(`${w.url}/sync`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': 'push' }, body });
    expect(unsigned.status).toBe(401);
    const forged = await fetch(`${w.url}/sync`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Hub-Signature-256': sign('wrong', body) }, body });
    expect(forged.status).toBe(401);
    await new Promise((r) => setTimeout(r, 800));
    expect(has('team', 'late-arrival')).toBe(false);

    const started = Date.now();
    const signed = await fetch(`${w.url}/sync`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sign('hook-secret', body) },
      body,
    });
    expect(signed.status).toBe(202);
    // The interval is an hour: a sync within ten times a quiet machine's second or so came from the webhook.
    await eventually('the new team exists', () => has('team', 'late-arrival'), 15_000);
    expect(Date.now() - started).toBeLessThan(15_000);
    // The cycle ends after its writes: its report and metrics follow the team by a moment.
    const head = (await repo.git.revparse(['HEAD'])).trim();
    await eventually('the report names the new commit', () => report(reports).source.revision === head, 5000);
    const metrics = await (await fetch(`${w.url}/metrics`)).text();
    expect(metric(metrics, 'teamkeys_reconcile_total{result="applied"}')).toBeGreaterThanOrEqual(2);
    expect(metrics).toContain('teamkeys_reconcile_duration_seconds_bucket');
    expect(metrics).toMatch(/teamkeys_api_requests_total\{verb="create",code="201"\} \d+/);
    expect(metric(metrics, 'teamkeys_last_success_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
    await w.stop();
  });

  it('without --self-heal, drift made with kubectl is reported and left in place', async () => {
    const reports = join(work, 'r2');
    const w = await daemon('--source', repo.dir, '--ref', 'main', '--source-id', 'd1', '--interval', '1h', '--report-dir', reports, ...target());
    await eventually('ready', async () => (await fetch(`${w.url}/readyz`)).status === 200);
    expect(k('patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"displayName":"Hand-made"}}').code).toBe(0);
    const drifted = await eventually('the drift is reported', () => report(reports).objects.find((o) => o.name === 'platform' && o.drift));
    expect(drifted).toMatchObject({ action: 'skip', reason: 'drift reported, not reverted (run with --self-heal to revert it)' });
    expect(drifted.changes[0]).toMatchObject({ path: 'spec.displayName', before: 'Hand-made', after: 'Platform', lastChangedBy: { manager: 'kubectl-patch' } });
    expect(metric(await (await fetch(`${w.url}/metrics`)).text(), 'teamkeys_drifted_objects{kind="Team"}')).toBe(1);
    expect(k('get', 'team', 'platform', '-o', 'jsonpath={.spec.displayName}').stdout).toBe('Hand-made');
    await w.stop();
  });

  it('with --self-heal, drift made with kubectl is reverted within seconds', async () => {
    const w = await daemon('--source', repo.dir, '--ref', 'main', '--source-id', 'd1', '--interval', '1h', '--self-heal', ...target());
    await eventually('the drift from before is healed', () => k('get', 'team', 'platform', '-o', 'jsonpath={.spec.displayName}').stdout === 'Platform');
    expect(k('patch', 'team', 'payments', '--type=merge', '-p', '{"spec":{"displayName":"Tampered"}}').code).toBe(0);
    await eventually('healed again', () => k('get', 'team', 'payments', '-o', 'jsonpath={.spec.displayName}').stdout === 'Payments', 5000);
    await w.stop();
  });

  it('an unreachable source keeps the last state applied and raises the failure metric', async () => {
    const moved = mkdtempSync(join(tmpdir(), 'teamkeys-moving-'));
    const source = join(moved, 'repo');
    renameSync(repo.dir, source);
    try {
      const w = await daemon('--source', `file://${source}`, '--ref', 'main', '--source-id', 'd1', '--interval', '1h', ...target());
      await eventually('ready', async () => (await fetch(`${w.url}/readyz`)).status === 200);
      const before = k('get', 'teams', '-o', 'jsonpath={.metadata.resourceVersion}').stdout;
      renameSync(source, `${source}-gone`);
      await fetch(`${w.url}/sync`, { method: 'POST' });
      const failures = await eventually('a failed cycle is counted', async () => metric(await (await fetch(`${w.url}/metrics`)).text(), 'teamkeys_reconcile_total{result="error"}'));
      expect(failures).toBeGreaterThanOrEqual(1);
      expect(has('team', 'platform')).toBe(true);
      expect(k('get', 'teams', '-o', 'jsonpath={.metadata.resourceVersion}').stdout).toBe(before);
      expect(w.stderr()).toContain('reconcile failed; the last good state stays applied');
      renameSync(`${source}-gone`, source);
      await w.stop();
    } finally {
      renameSync(source, repo.dir);
      rmSync(moved, { recursive: true, force: true });
    }
  });

  it('a folder source is watched: a new manifest is applied with no webhook and no interval', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'teamkeys-folder-'));
    try {
      writeFileSync(join(folder, 'one.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: folder-one\n');
      const w = await daemon('--source', folder, '--source-id', 'folder', '--interval', '1h', ...target());
      await eventually('the first file is applied', () => has('team', 'folder-one'));
      writeFileSync(join(folder, 'two.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: folder-two\n');
      await eventually('the new file is applied', () => has('team', 'folder-two'), 5000);
      await w.stop();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('SIGTERM in the middle of a run finishes the write in flight, starts no other, reports each, and exits 0', async () => {
    const total = 300;
    const many = await newRepo({ withExamples: false });
    const reports = join(work, 'bulk-reports');
    try {
      for (let i = 0; i < total; i++) {
        many.write(`teams/t${i}.yaml`, `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: bulk-${i}\nspec:\n  displayName: Bulk ${i}\n  users: [u${i}, v${i}]\n`);
      }
      await many.commit('many teams');
      // Polled over HTTPS directly: kubectl takes too long a start to catch a run in the middle.
      const ca = readFileSync(join(served.dir, 'tls/cert.pem'));
      const bulk = () =>
        new Promise<string[]>((done, fail) => {
          const req = httpsGet(`${served.url}/apis/management.service/v1/teams`, { ca, headers: { Authorization: `Bearer ${served.adminKey}` } }, (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => done((JSON.parse(body) as { items: { metadata: { name: string } }[] }).items.map((t) => t.metadata.name).filter((n) => n.startsWith('bulk-'))));
          });
          req.on('error', fail);
        });
      const w = await daemon('--source', many.dir, '--source-id', 'bulk', '--interval', '1h', '--concurrency', '1', '--report-dir', reports, ...target());
      await eventually('writes have started', async () => (await bulk()).length > 0, 10_000);
      expect(await w.stop('SIGTERM')).toBe(0);
      const created = await bulk();
      // The signal came mid-run: some teams exist and some were never started.
      expect(created.length).toBeGreaterThan(0);
      expect(created.length).toBeLessThan(total);
      // Every write the server acknowledged is in the report as Created, and the rest as not started.
      const last = report(reports);
      const byResult = (r: string) => last.objects.filter((o) => o.result === r).map((o) => o.name).sort();
      expect(byResult('Created')).toEqual([...created].sort());
      expect(byResult('Skipped')).toHaveLength(total - created.length);
      expect(last.objects.find((o) => o.result === 'Skipped')).toMatchObject({ note: 'not started: the run was stopped' });
      // The run did not finish: the report says so (it said `applied` until a review).
      expect(last.outcome).toBe('failed');
      expect(last.summary.failed).toBe(total - created.length);
      // Logged as a stop, not as failed writes.
      expect(w.stderr()).toContain(`the run was stopped before ${total - created.length} write(s); the next run makes them`);
      expect(w.stderr()).not.toContain('write(s) failed');
      await new Promise((r) => setTimeout(r, 500));
      expect(await bulk()).toHaveLength(created.length); // and nothing is written after the exit
    } finally {
      many.cleanup();
    }
  });
});
