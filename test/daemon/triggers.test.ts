/**
 * What makes `teamkeys watch` run, counted through its /metrics: changes to what git describes of
 * a managed object do; a key's status.lastActivity writes and managedFields-only writes do not.
 * A git source is fetched into one mirror in the state directory; a cycle with neither a new
 * revision nor a changed managed object reads, plans and writes nothing.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { kubeconfigWithToken, kubectl, kubectlPath, startServe, type Served } from '../server/serve-process.js';
import { eventually, metric, startWatch, type Watcher } from './watch-process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('what triggers a daemon run', () => {
  let served: Served;
  let repo: Repo;
  let w: Watcher;
  const k = (...args: string[]) => kubectl(served, args);
  const metrics = async () => (await fetch(`${w.url}/metrics`)).text();
  /** Full reconciles, whatever their outcome. */
  const runs = async () => {
    const text = await metrics();
    return ['clean', 'changes', 'drifted', 'applied', 'failed', 'refused', 'invalid', 'error'].reduce((n, r) => n + (metric(text, `teamkeys_reconcile_total{result="${r}"}`) ?? 0), 0);
  };
  const unchanged = async () => metric(await metrics(), 'teamkeys_reconcile_unchanged_total') ?? 0;
  /** Waits until no run has started for `quietMs`, and returns the count. */
  const settled = async (quietMs = 1500) => {
    let last = await runs();
    for (let i = 0; i < 20; i++) {
      await sleep(quietMs);
      const now = await runs();
      if (now === last) return now;
      last = now;
    }
    throw new Error('the daemon never settled');
  };

  beforeAll(async () => {
    kubectlPath();
    served = await startServe(['--activity-interval', '1']);
    repo = await newRepo();
    w = await startWatch([
      '--source', repo.dir, '--ref', 'main', '--source-id', 'triggers', '--interval', '1h', '--key-dir', join(served.dir, 'keys'),
      '--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem'),
    ]);
    await eventually('the first sync is done', async () => (await fetch(`${w.url}/readyz`)).status === 200);
  });
  afterAll(async () => {
    await w?.stop();
    await served.stop();
    repo.cleanup();
  });

  it('a key in use (status.lastActivity written every second) triggers no run', async () => {
    const before = await settled();
    const asKey = kubeconfigWithToken(served, readFileSync(join(served.dir, 'keys', 'payments-ci.key'), 'utf8').trim(), 'payments-ci');
    const versions = new Set<string>();
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      // Authenticated (what it may see does not matter): the server records the key's activity.
      expect(kubectl(served, ['get', 'teams'], { kubeconfig: asKey }).stderr).not.toContain('Unauthorized');
      versions.add(k('get', 'oak', 'payments-ci', '-o', 'jsonpath={.metadata.resourceVersion}').stdout);
      await sleep(250);
    }
    // The server did write the key's status several times while it was used...
    expect(versions.size).toBeGreaterThanOrEqual(3);
    expect(k('get', 'oak', 'payments-ci', '-o', 'jsonpath={.status.lastActivity}').stdout).toMatch(/Z$/);
    // ...and none of those writes made the daemon run.
    expect(await settled()).toBe(before);
  });

  it('a managedFields-only write (another manager applying the same values) triggers no run', async () => {
    const before = await settled();
    const rv = k('get', 'team', 'platform', '-o', 'jsonpath={.metadata.resourceVersion}').stdout;
    const same = 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: platform\nspec:\n  displayName: Platform\n';
    const applied = kubectl(served, ['apply', '--server-side', '--field-manager', 'auditor', '-f', '-'], { input: same });
    expect(applied.code, applied.stderr).toBe(0);
    expect(k('get', 'team', 'platform', '-o', 'jsonpath={.metadata.resourceVersion}').stdout).not.toBe(rv);
    expect(k('get', 'team', 'platform', '-o', 'jsonpath={.metadata.managedFields[*].manager}', '--show-managed-fields').stdout).toContain('auditor');
    expect(await settled()).toBe(before);
  });

  it('a change to what git describes of a managed object does trigger a run', async () => {
    const before = await settled();
    expect(k('patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"displayName":"Changed by hand"}}').code).toBe(0);
    await eventually('the change made the daemon run', async () => (await runs()) > before, 5000);
  });

  it('keeps one mirror per source, fetches into it, and a cycle with nothing new is cheap', async () => {
    const mirrors = join(w.stateDir, 'mirrors');
    const made = readdirSync(mirrors);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatch(/\.git$/);
    // A mark inside the mirror survives later cycles: they fetch into it rather than clone anew.
    writeFileSync(join(mirrors, made[0]!, 'teamkeys-test-mark'), '');

    const before = await settled();
    const cheapBefore = await unchanged();
    expect((await fetch(`${w.url}/sync`, { method: 'POST' })).status).toBe(202);
    await eventually('the cycle found nothing new', async () => (await unchanged()) > cheapBefore, 5000);
    expect(await runs()).toBe(before);

    repo.write('teams/mirrored.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: mirrored\n');
    await repo.commit('one more team');
    expect((await fetch(`${w.url}/sync`, { method: 'POST' })).status).toBe(202);
    await eventually('the new commit is applied', () => k('get', 'team', 'mirrored', '-o', 'name').code === 0, 5000);
    expect(await runs()).toBeGreaterThan(before);
    expect(readdirSync(mirrors)).toEqual(made);
    expect(existsSync(join(mirrors, made[0]!, 'teamkeys-test-mark'))).toBe(true);
  });
});
