/**
 * Issue 42, point 9: the webhook accepted a replayed signed delivery, and `teamkeys watch` served
 * /sync/report to anyone (the docs' example listens on 0.0.0.0). A delivery is now acted on once
 * (by its id, and by its signature: the id is not signed), the report needs the webhook secret as a
 * bearer token, and without a secret it is served to loopback clients only.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { buildDaemon } from '../../src/cli/daemon-build.js';
import { registerDaemonRoutes } from '../../src/daemon/routes.js';
import { sign } from '../../src/daemon/webhook.js';
import { teamkeys } from '../support/cli.js';
import { statusBeforeBody } from '../support/before-body.js';
import { eventually, metric, startWatch, type Watcher } from './watch-process.js';

describe('teamkeys watch with a webhook secret', () => {
  let work: string;
  let w: Watcher;
  /** Cycles run, whatever they found (a folder unchanged since the last cycle is counted as unchanged). */
  const runs = async () => {
    const text = await (await fetch(`${w.url}/metrics`)).text();
    const results = ['clean', 'changes', 'drifted', 'applied', 'failed', 'refused', 'invalid', 'error'].map((r) => `teamkeys_reconcile_total{result="${r}"}`);
    return [...results, 'teamkeys_reconcile_unchanged_total'].reduce((n, name) => n + (metric(text, name) ?? 0), 0);
  };
  const deliver = (body: string, id: string, signature = sign('hook-secret', body)) =>
    fetch(`${w.url}/sync`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': id, 'X-Hub-Signature-256': signature }, body });

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'teamkeys-replay-'));
    mkdirSync(join(work, 'src'));
    writeFileSync(join(work, 'src/team.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: platform\nspec:\n  users: [ana]\n');
    writeFileSync(join(work, 'secret'), 'hook-secret\n');
    w = await startWatch(['--source', join(work, 'src'), '--source-id', 'replay', '--interval', '1h', '--webhook-secret-file', join(work, 'secret'), '--store', `sqlite:${join(work, 'store.db')}`]);
    await eventually('the first sync is done', async () => (await fetch(`${w.url}/readyz`)).status === 200);
  });
  afterAll(async () => {
    await w.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('answers a /sync without a signature 401 before its body is read', async () => {
    expect(await statusBeforeBody(w.url, '/sync', 'POST', {})).toBe('HTTP/1.1 401 Unauthorized');
  });

  it('answers a path or method it does not serve 404 before the body is read, as a Status', async () => {
    expect(await statusBeforeBody(w.url, '/nope', 'POST', {})).toBe('HTTP/1.1 404 Not Found');
    expect(await statusBeforeBody(w.url, '/healthz', 'PUT', {})).toBe('HTTP/1.1 404 Not Found');
    const res = await fetch(`${w.url}/nope`, { method: 'POST', body: 'x' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });

  it('serves the report only to a request bearing the webhook secret', async () => {
    const anonymous = await fetch(`${w.url}/sync/report`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', message: 'the report needs the webhook secret as a bearer token (Authorization: Bearer ...)' });
    expect((await fetch(`${w.url}/sync/report`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    const allowed = await fetch(`${w.url}/sync/report`, { headers: { Authorization: 'Bearer hook-secret' } });
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toMatchObject({ kind: 'Report', source: { id: 'replay' } });
  });

  it('acts on a signed delivery once: a replay, under its id or a new one, is refused and syncs nothing', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', after: 'a1' });
    const before = await runs();
    expect((await deliver(body, 'delivery-1')).status).toBe(202);
    await eventually('the delivery ran a sync', async () => (await runs()) > before);
    const after = await runs();
    const replayed = await deliver(body, 'delivery-1');
    expect(replayed.status).toBe(409);
    expect(await replayed.json()).toMatchObject({ reason: 'AlreadyExists', message: 'delivery delivery-1 was received before: a replayed delivery is not acted on' });
    const renamed = await deliver(body, 'delivery-2');
    expect(renamed.status).toBe(409);
    expect(await renamed.json()).toMatchObject({ message: 'a delivery with this body and signature was received before: a replayed delivery is not acted on' });
    // Another delivery (another body) is acted on.
    expect((await deliver(JSON.stringify({ ref: 'refs/heads/main', after: 'b2' }), 'delivery-3')).status).toBe(202);
    await eventually('the new delivery ran a sync', async () => (await runs()) > after);
    expect(await runs()).toBe(after + 1);
  });

  it('teamkeys sync with the secret runs a sync each time it is asked (a delivery of its own) and reads the report with it', () => {
    for (let i = 0; i < 2; i++) {
      const r = teamkeys(['sync', '--server', w.url, '--webhook-secret-file', join(work, 'secret'), '-o', 'json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'Report', source: { id: 'replay' } });
    }
  });
});

describe('the daemon\'s report without a webhook secret', () => {
  it('is served to loopback clients only', async () => {
    const app = Fastify();
    // A daemon that is never started: the route answers from its (empty) last report.
    const client = new HttpClient({ server: 'https://127.0.0.1:1', token: 'unused', group: 'management.service' });
    const { daemon, metrics } = await buildDaemon({ source: { source: tmpdir() }, intervalMs: 3_600_000, selfHeal: false, prune: false, allowEmpty: false, maxPrune: 50, concurrency: 1 }, client, pino({ level: 'silent' }));
    registerDaemonRoutes(app, daemon, metrics, { health: true });
    try {
      const remote = await app.inject({ method: 'GET', url: '/sync/report', remoteAddress: '192.0.2.7' });
      expect(remote.statusCode).toBe(403);
      expect(remote.json()).toMatchObject({ reason: 'Forbidden', message: 'without --webhook-secret-file the report is served to loopback clients only: set a webhook secret and send it as a bearer token' });
      for (const local of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
        const r = await app.inject({ method: 'GET', url: '/sync/report', remoteAddress: local });
        expect(r.json()).toMatchObject({ reason: 'NotFound', message: 'no sync has completed yet' });
      }
    } finally {
      await app.close();
      await client.close();
    }
  });
});
