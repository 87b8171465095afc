/**
 * Scheduled rotation from git, end to end against an in-process server whose clock the test
 * moves, and the stand-in GitHub API (which opens the sealed values): the due key is rotated,
 * its new value delivered and then confirmed, both values work during the overlap and the old one
 * is refused after it; a refused delivery leaves the old value working, is reported as a failure,
 * and the next run retries and succeeds. Environment, organization and file sinks; the embedded
 * store; the daemon in one cycle.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { EmbeddedClient } from '../../src/client/embedded.js';
import { HttpClient } from '../../src/client/http.js';
import { SyncDaemon } from '../../src/daemon/daemon.js';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import { GitHubSecrets } from '../../src/gitops/keys/github-secrets.js';
import { applyPlanFile, writeSavedPlan } from '../../src/gitops/saved/plan-file.js';
import { reconcile, type ReconcileOptions } from '../../src/gitops/reconcile.js';
import type { Report } from '../../src/gitops/report/report.js';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import { renderText } from '../../src/gitops/report/text.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';
import { day, hour, ManualClock } from '../support/clock.js';
import { startGitHubStandIn, type GitHubStandIn } from './github-standin.js';
import { root } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { monthlyKeyYaml } from '../support/manifests.js';

const ajv = new Ajv({ allErrors: true, strict: false });
(addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
const validReport = ajv.compile(JSON.parse(readFileSync(join(root, 'schemas/report.schema.json'), 'utf8')) as object);

const key = (name: string, sink: string, overlap = '1h') => monthlyKeyYaml({ name, sink, overlap });

/** No key value in any output: the delivered values, and nothing shaped like a key. */
function noKeyIn(text: string, values: Iterable<string>) {
  for (const v of values) expect(text).not.toContain(v);
  expect(text).not.toMatch(/\btk_[0-9A-Za-z]{49}\b/);
}

describe('scheduled rotation against a served API and the GitHub stand-in', () => {
  const clock = new ManualClock(Date.now() - 31 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let source: string;
  let keyDir: string;
  let client: HttpClient;
  const run = (mode: 'plan' | 'apply', extra: Partial<ReconcileOptions> = {}) =>
    reconcile({ mode, client, source: { source, sourceId: 'ci-keys' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 4, now: clock.now, keyDelivery: new GitHubSecrets({ token: github.token, apiUrl: github.url }), keyDir, ...extra }).then((r) => {
      expect(validReport(r.report), JSON.stringify(validReport.errors)).toBe(true);
      return r.report;
    });
  /** The status an authenticated request with this value gets (ci-bot reads its own key), and the message of a refusal. */
  const use = async (value: string) => {
    const res = await fetch(`${server.api}/ownedaccesskeys/deploy-ci`, { headers: { Authorization: `Bearer ${value}` } });
    return { status: res.status, message: ((await res.json()) as { message?: string }).message };
  };
  const live = async (name: string) => (await client.get('ownedaccesskeys', name)) as KubeObject & { status?: { rotation?: Record<string, unknown> } };
  const object = (r: Report, name: string) => r.objects.find((o) => o.name === name)!;
  const outputs = (r: Report) => JSON.stringify(r) + renderText(r) + renderMarkdown(r);
  /** A plan of the source as it is now, saved to `name` in keyDir (for apply --plan). */
  const savePlanNow = async (name: string) => {
    const planned = await reconcile({ mode: 'plan', client, source: { source, sourceId: 'ci-keys' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 4, now: clock.now });
    const file = join(keyDir, name);
    expect(await writeSavedPlan(file, planned, client)).toBeUndefined();
    return { planned, file };
  };
  const applySaved = (file: string) => applyPlanFile(file, client, { concurrency: 4, keyDir, keyDelivery: new GitHubSecrets({ token: github.token, apiUrl: github.url }) });

  beforeAll(async () => {
    server = await startInProcess({ now: clock.now });
    github = await startGitHubStandIn();
    github.environments.add('acme/payments/production');
    source = mkdtempSync(join(tmpdir(), 'rotation-source-'));
    keyDir = mkdtempSync(join(tmpdir(), 'rotation-keys-'));
    client = new HttpClient({ server: server.base, token: adminKey });
    writeFileSync(join(source, 'deploy.yaml'), key('deploy-ci', 'github:acme/payments/DEPLOY_KEY'));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    await github.close();
    rmSync(source, { recursive: true, force: true });
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('a key older than rotate-every is planned, rotated, delivered, and both values work until the overlap ends', async () => {
    const created = await run('apply');
    expect(object(created, 'deploy-ci')).toMatchObject({ action: 'create', result: 'Created', keySecret: 'github:acme/payments/DEPLOY_KEY' });
    const first = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    expect((await use(first)).status).toBe(200);

    clock.set(Date.now());
    const planned = await run('plan');
    expect(planned.outcome).toBe('changes');
    expect(object(planned, 'deploy-ci')).toMatchObject({ action: 'rotate', rotation: { reason: 'due', age: '31d', rotateEvery: '30d', overlap: '1h', sink: 'github:acme/payments/DEPLOY_KEY' } });
    expect(github.secrets.get('acme/payments/DEPLOY_KEY')).toBe(first);

    const applied = await run('apply');
    expect(applied.outcome).toBe('applied');
    const second = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    expect(second).not.toBe(first);
    const until = new Date(clock.now().getTime() + hour).toISOString().replace(/\.\d{3}Z$/, 'Z');
    expect(object(applied, 'deploy-ci')).toMatchObject({ action: 'rotate', result: 'Rotated', keySecret: 'github:acme/payments/DEPLOY_KEY', rotation: { previousValidUntil: until } });
    expect(renderText(applied)).toContain(`delivered to github:acme/payments/DEPLOY_KEY; the previous value works until ${until}`);
    noKeyIn(outputs(applied), [first, second]);

    expect((await use(second)).status).toBe(200);
    expect((await use(first)).status).toBe(200);
    expect((await live('deploy-ci')).status?.rotation).toMatchObject({ overlapSeconds: 3600, previousValidUntil: until });
    expect((await live('deploy-ci')).status?.rotation?.awaitingConfirmation).toBeUndefined();
    expect((await run('plan')).outcome).toBe('clean');

    clock.advance(hour + 1000);
    const refused = await use(first);
    expect(refused.status).toBe(401);
    expect(refused.message).toContain('access key "deploy-ci" was rotated at');
    expect((await use(second)).status).toBe(200);
  });

  it('a refused delivery keeps the old value working and fails the run; the next run retries and succeeds', async () => {
    const before = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    clock.advance(31 * day);
    github.failPutWith = 403;
    const failed = await run('apply');
    expect(failed.outcome).toBe('failed');
    expect(failed.summary.failed).toBe(1);
    expect(object(failed, 'deploy-ci').error).toBe(
      'OwnedAccessKey/deploy-ci: rotated, but the key was not delivered to GitHub secret DEPLOY_KEY of acme/payments: GitHub answered 403 "Resource not accessible by integration" to PUT /repos/acme/payments/actions/secrets/DEPLOY_KEY (the token needs the "Secrets: read and write" permission on the repository); the previous value keeps working (the rotation awaits confirmation) and the next run rotates again and delivers',
    );
    noKeyIn(outputs(failed), [before]);
    expect((await live('deploy-ci')).status?.rotation?.awaitingConfirmation).toBe(true);
    // Hours later, with no deadline running, the value CI holds still works.
    clock.advance(5 * hour);
    expect((await use(before)).status).toBe(200);

    github.failPutWith = undefined;
    const planned = await run('plan');
    expect(object(planned, 'deploy-ci').rotation).toMatchObject({ reason: 'unconfirmed' });
    const retried = await run('apply');
    expect(retried.outcome).toBe('applied');
    const after = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    expect(after).not.toBe(before);
    expect((await use(after)).status).toBe(200);
    expect((await use(before)).status).toBe(200);
    expect((await live('deploy-ci')).status?.rotation?.awaitingConfirmation).toBeUndefined();
  });

  it('environment, organization and file sinks receive the rotated value, which authenticates', async () => {
    const file = join(keyDir, 'ci', 'files-ci.key');
    writeFileSync(join(source, 'more.yaml'), [key('env-ci', 'github-env:acme/payments/production/DEPLOY_KEY'), key('org-ci', 'github-org:acme/SHARED_KEY'), key('files-ci', 'file:ci/files-ci.key')].join('---\n'));
    // An organization secret is created by an administrator, limited to the repositories that need it.
    github.orgVisibility.set('org:acme/SHARED_KEY', 'selected');
    github.orgRepositories.set('org:acme/SHARED_KEY', [101, 102]);
    clock.set(Date.now() - 31 * day);
    expect((await run('apply')).outcome).toBe('applied');
    const firsts = [github.secrets.get('acme/payments/env:production/DEPLOY_KEY')!, github.secrets.get('org:acme/SHARED_KEY')!, readFileSync(file, 'utf8').trim()];
    clock.set(Date.now());
    const applied = await run('apply');
    expect(applied.objects.filter((o) => o.result === 'Rotated').map((o) => o.name).sort()).toEqual(['env-ci', 'files-ci', 'org-ci']);
    const now = [github.secrets.get('acme/payments/env:production/DEPLOY_KEY')!, github.secrets.get('org:acme/SHARED_KEY')!, readFileSync(file, 'utf8').trim()];
    expect(github.orgVisibility.get('org:acme/SHARED_KEY')).toBe('selected');
    expect(github.orgRepositories.get('org:acme/SHARED_KEY')).toEqual([101, 102]);
    for (const [i, name] of ['env-ci', 'org-ci', 'files-ci'].entries()) {
      expect(now[i]).not.toBe(firsts[i]);
      const res = await fetch(`${server.api}/ownedaccesskeys/${name}`, { headers: { Authorization: `Bearer ${now[i]}` } });
      expect(res.status).toBe(200);
    }
    noKeyIn(outputs(applied), [...firsts, ...now]);
  });

  it('the daemon rotates a key that fell due in one cycle, and its report shows the rotation', async () => {
    const reports = mkdtempSync(join(tmpdir(), 'rotation-daemon-'));
    const cycles: Report[] = [];
    const logged: string[] = [];
    const metrics = new DaemonMetrics();
    const skipped = async () => (await metrics.unchanged.get()).values[0]?.value ?? 0;
    const daemon = new SyncDaemon({
      source: { source, sourceId: 'ci-keys' },
      client,
      intervalMs: 3_600_000,
      selfHeal: true,
      prune: false,
      allowEmpty: false,
      maxPrune: 10,
      concurrency: 4,
      keyDir,
      keyDelivery: new GitHubSecrets({ token: github.token, apiUrl: github.url }),
      now: clock.now,
      reportDir: reports,
      metrics,
      log: pino({ level: 'info' }, { write: (line: string) => void logged.push(line) }),
      onCycle: (r) => r && cycles.push(r),
    });
    try {
      daemon.start();
      await eventually('the first cycle ran', () => cycles.length >= 1);
      expect(cycles[0]!.outcome).toBe('clean');
      // Nothing changed and nothing is due: the next cycle skips planning (the daemon's usual economy)...
      await eventually('the cycle is over', () => !daemon.cycling);
      daemon.trigger('interval');
      await eventually('a skipped rotation is counted', async () => (await skipped()) === 1);
      const before = github.secrets.get('acme/payments/DEPLOY_KEY');
      // ...until a key falls due: past every key's schedule (deploy-ci was last rotated a month after the others).
      clock.advance(62 * day);
      daemon.trigger('interval');
      await eventually('the second cycle ran', () => cycles.length >= 2);
      expect(cycles[1]!.outcome).toBe('applied');
      expect(await skipped()).toBe(1);
      expect(cycles[1]!.objects.filter((o) => o.result === 'Rotated').map((o) => o.name).sort()).toEqual(['deploy-ci', 'env-ci', 'files-ci', 'org-ci']);
      expect(github.secrets.get('acme/payments/DEPLOY_KEY')).not.toBe(before);
      expect(readFileSync(join(reports, 'report.md'), 'utf8')).toContain('rotated 4');
      const line = logged.map((l) => JSON.parse(l) as { msg: string; rotated?: string[] }).find((l) => l.msg.startsWith('reconciled; rotated 4 key(s)'));
      expect(line?.rotated).toContainEqual(expect.stringMatching(/^OwnedAccessKey\/deploy-ci -> github:acme\/payments\/DEPLOY_KEY \(previous value until \S+Z\)$/));
      noKeyIn(logged.join('\n'), github.secrets.values());
    } finally {
      await daemon.stop();
      rmSync(reports, { recursive: true, force: true });
    }
  });

  it('drift reported and left in place (no --self-heal) does not stop a rotation', async () => {
    const patched = await server.fetch(`${server.api}/ownedaccesskeys/env-ci?fieldManager=kubectl-edit`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { annotations: { 'gitops.management.service/rotation-overlap': '9h' } } }),
    });
    expect(patched.status).toBe(200);
    const before = github.secrets.get('acme/payments/env:production/DEPLOY_KEY');
    clock.advance(31 * day);
    const r = await run('apply', { reportDriftOnly: true });
    expect(r.outcome).toBe('drifted');
    expect(object(r, 'env-ci')).toMatchObject({ action: 'skip', drift: true, result: 'Skipped', keySecret: 'github-env:acme/payments/production/DEPLOY_KEY', rotation: { reason: 'due' } });
    expect(object(r, 'env-ci').rotation?.previousValidUntil).toBeDefined();
    expect(github.secrets.get('acme/payments/env:production/DEPLOY_KEY')).not.toBe(before);
    // The drift stays; the rotation used git's overlap.
    expect((await live('env-ci')).metadata.annotations?.['gitops.management.service/rotation-overlap']).toBe('9h');
    expect((await live('env-ci')).status?.rotation).toMatchObject({ overlapSeconds: 3600 });
    expect(renderText(r)).toContain('rotate key (value 31d old, rotate-every 30d): delivered to github-env:acme/payments/production/DEPLOY_KEY');
  });

  it('a saved plan carries its rotations, and apply --plan makes them', async () => {
    clock.advance(31 * day);
    const { planned, file } = await savePlanNow('plan.json');
    expect(planned.report.summary.rotate).toBe(4);
    expect(readFileSync(file, 'utf8')).toContain('"rotation"');
    const before = github.secrets.get('acme/payments/DEPLOY_KEY');
    const applied = await applySaved(file);
    expect(applied.objects.filter((o) => o.rotation?.previousValidUntil).map((o) => o.name).sort()).toEqual(['deploy-ci', 'env-ci', 'files-ci', 'org-ci']);
    expect(applied.outcome).toBe('applied');
    expect(github.secrets.get('acme/payments/DEPLOY_KEY')).not.toBe(before);
  });

  it('CI jobs running across a scheduled rotation, each with the value it read at its start, see no 401', async () => {
    clock.advance(31 * day);
    const statuses: number[] = [];
    const held = new Set<string>();
    /** A job: reads the secret once, then uses it, as a workflow job does; the last request after `later` (within the overlap). */
    const job = async (later: Promise<void>) => {
      const value = github.secrets.get('acme/payments/DEPLOY_KEY')!;
      held.add(value);
      for (let i = 0; i < 3; i++) statuses.push((await use(value)).status);
      await later;
      statuses.push((await use(value)).status);
    };
    let release!: () => void;
    const later = new Promise<void>((r) => (release = r));
    const jobs: Promise<void>[] = [];
    let applying = true;
    const applied = run('apply').finally(() => (applying = false));
    while (applying) {
      jobs.push(job(later));
      await new Promise((r) => setTimeout(r, 2));
    }
    for (let i = 0; i < 3; i++) jobs.push(job(later));
    expect((await applied).outcome).toBe('applied');
    // The longest job ends within the overlap (1h) after the new value was delivered.
    clock.advance(59 * 60_000);
    release();
    await Promise.all(jobs);
    // Jobs started with the old value and with the new one.
    expect(held.size).toBe(2);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });

  // Found by a review (stop 63): rotation status was outside the saved plan's digest.
  it('a saved plan whose key was rotated by hand since is refused as stale, and rotates nothing', async () => {
    clock.advance(31 * day);
    const { planned, file } = await savePlanNow('plan-stale.json');
    expect(planned.report.summary.rotate).toBe(4);
    const rotated = await client.rotate('deploy-ci', { overlapSeconds: 300 });
    const handedOut = github.secrets.get('acme/payments/DEPLOY_KEY');
    const applied = await applySaved(file);
    expect(applied.outcome).toBe('refused');
    expect(applied.refused).toMatch(/^the plan is stale, nothing was written: OwnedAccessKey\/deploy-ci changed since the plan/);
    expect(github.secrets.get('acme/payments/DEPLOY_KEY')).toBe(handedOut);
    // Planned again, the hand-rotated key is not due. Using it (which the server records in its
    // rotation status) between plan and apply does not make the plan stale.
    const again = await savePlanNow('plan-stale.json');
    expect(again.planned.report.objects.find((o) => o.name === 'deploy-ci')?.rotation).toBeUndefined();
    const before = (await live('deploy-ci')).metadata.resourceVersion;
    expect((await use((rotated.spec as { key: string }).key)).status).toBe(200);
    expect((await live('deploy-ci')).metadata.resourceVersion).not.toBe(before);
    expect((await applySaved(again.file)).outcome).toBe('applied');
  });
});

describe('scheduled rotation on the embedded store', () => {
  it('rotates, delivers to a file, confirms', async () => {
    const clock = new ManualClock(Date.now() - 31 * day);
    const registry = createRegistry(new MemoryStore(), { now: clock.now });
    const client = new EmbeddedClient(registry, 'memory:');
    const source = mkdtempSync(join(tmpdir(), 'rotation-embedded-'));
    const keyDir = mkdtempSync(join(tmpdir(), 'rotation-embedded-keys-'));
    writeFileSync(join(source, 'k.yaml'), key('local-ci', 'file:sink/local-ci.key'));
    const run = () => reconcile({ mode: 'apply', client, source: { source, sourceId: 'local' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 1, now: clock.now, keyDir }).then((r) => r.report);
    try {
      expect((await run()).outcome).toBe('applied');
      const first = readFileSync(join(keyDir, 'sink', 'local-ci.key'), 'utf8');
      clock.set(Date.now());
      const rotated = await run();
      expect(rotated.objects[0]).toMatchObject({ action: 'rotate', result: 'Rotated' });
      expect(readFileSync(join(keyDir, 'sink', 'local-ci.key'), 'utf8')).not.toBe(first);
      const status = (await client.get('ownedaccesskeys', 'local-ci'))!.status as { rotation?: Record<string, unknown> };
      expect(status.rotation).toMatchObject({ overlapSeconds: 3600 });
      expect(status.rotation?.previousValidUntil).toBeDefined();
    } finally {
      await client.close();
      rmSync(source, { recursive: true, force: true });
      rmSync(keyDir, { recursive: true, force: true });
    }
  });
});
