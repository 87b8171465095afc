/**
 * Issue 28, point 9: the daemon does not hide failures. Over a real `teamkeys serve --sync-source`:
 * an invalid source is logged at error with the error itself, drift at warn with who made it, and
 * the API server's /metrics has Node's and the process's figures and request latency by verb,
 * resource and code, with no per-object or per-user label.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startServe, type Served } from '../server/serve-process.js';
import { eventually } from './watch-process.js';

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

describe('what the sidecar and the API server tell an operator', () => {
  let served: Served;
  let repo: Repo;
  const lines = () =>
    served
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${served.url}/apis/management.service/v1/${path}`, { ...init, headers: { Authorization: `Bearer ${served.adminKey}`, ...(init.body ? { 'Content-Type': 'application/merge-patch+json' } : {}), 'User-Agent': 'kubectl-patch' } });
  const metrics = async (token?: string) => {
    const res = await fetch(`${new URL(served.url).origin}/metrics`, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
    return { status: res.status, text: await res.text() };
  };

  beforeAll(async () => {
    repo = await newRepo();
    // A folder source: the sidecar sees a file change at once, without a commit.
    served = await startServe(['--insecure-http', '--sync-source', repo.dir, '--sync-source-id', 'signals', '--sync-interval', '1h']);
    await eventually('the first sync is done', () => lines().find((l) => l.msg === 'reconciled'), 20_000);
  });
  afterAll(async () => {
    await served.stop();
    repo.cleanup();
  });

  it('an invalid source is an error-level line carrying the error at file:line:col, not "reconciled" at info', async () => {
    const valid = readFileSync(join(repo.dir, 'teams/platform.yaml'), 'utf8');
    repo.write('teams/platform.yaml', valid.replace(/users:/, 'users: oops\n  formerUsers:'));
    const line = await eventually('the invalid source is logged', () => lines().find((l) => l.outcome === 'invalid'), 15_000);
    expect(line.level).toBe(50);
    expect(line.msg).toMatch(/^the source is invalid \(\d+ error\(s\)\); nothing was written, the last good state stays: teams\/platform\.yaml:\d+:\d+: /);
    expect(line.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^teams\/platform\.yaml:\d+:\d+: /)]));
    expect(lines().filter((l) => l.outcome === 'invalid' && l.level < 50)).toEqual([]);
    repo.write('teams/platform.yaml', valid);
    await eventually('the source is valid again', () => lines().filter((l) => l.msg === 'reconciled').length >= 2 || undefined, 15_000);
  });

  it('drift is a warning naming what drifted and who made it', async () => {
    const patched = await api('teams/platform?fieldManager=kubectl-patch', { method: 'PATCH', body: '{"spec":{"displayName":"By hand"}}' });
    expect(patched.status).toBe(200);
    const line = await eventually('the drift is logged', () => lines().find((l) => Array.isArray(l.drift)), 15_000);
    expect(line.level).toBe(40);
    expect(line.msg).toMatch(/^drift left in place \(report-only; --self-heal reverts it\): Team\/platform: changed spec\.displayName: admin \(key admin\) via kubectl-patch at /);
  });

  it('/metrics: process and Node.js figures, request latency by verb, resource and code, and the sidecar\'s; a key is needed', async () => {
    expect((await metrics()).status).toBe(401);
    expect((await api('teams')).status).toBe(200);
    expect((await api('teams/platform')).status).toBe(200);
    const { status, text } = await metrics(served.adminKey);
    expect(status).toBe(200);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'teamkeys_reconcile_total']) expect(text).toContain(`\n${name}`);
    expect(text).toMatch(/^teamkeys_apiserver_request_duration_seconds_bucket\{le="0\.005",verb="LIST",resource="teams",code="200"\} \d+$/m);
    expect(text).toMatch(/^teamkeys_apiserver_request_duration_seconds_bucket\{le="60",verb="LIST",resource="teams",code="200"\} \d+$/m);
    expect(text).toMatch(/^teamkeys_apiserver_request_duration_seconds_count\{verb="GET",resource="teams",code="200"\} \d+$/m);
    expect(text).toMatch(/^teamkeys_apiserver_request_duration_seconds_count\{verb="PATCH",resource="teams",code="200"\} \d+$/m);
    // Low cardinality: the labels are verb, resource and code only; no object, user or path.
    const labelNames = new Set([...text.matchAll(/^teamkeys_apiserver_request_duration_seconds_\w+\{([^}]*)\}/gm)].flatMap((m) => m[1]!.split(',').map((kv) => kv.split('=')[0])));
    expect([...labelNames].sort()).toEqual(['code', 'le', 'resource', 'verb']);
    expect(text).not.toMatch(/platform|admin/);
  });
});
