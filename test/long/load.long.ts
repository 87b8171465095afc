/**
 * A bounded mixed workload against `teamkeys serve` on SQLite: reads, lists, creates and patches
 * from 16 connections for LOAD_SECONDS (default 30) while 20 watchers follow every change. Zero
 * errors is the bar; p50 / p99 latencies are written to bench/results/load.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../support/cli.js';
import { startServe, type Served } from '../server/serve-process.js';

const seconds = Number(process.env.LOAD_SECONDS ?? 30);
const adminKey = `LoadRunner${'l'.repeat(50)}`;
const headers = { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' };

describe('mixed load', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-load-'));
  let served: Served;
  let v1: string;
  beforeAll(async () => {
    served = await startServe(['--store', `sqlite:${join(dir, 'load.db')}`, '--insecure-http', '--log-level', 'warn'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    v1 = `${served.url}/apis/management.service/v1`;
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${v1}/teams`, { method: 'POST', headers, body: JSON.stringify({ metadata: { name: `seed-${i}` }, spec: { displayName: `Seed ${i}`, users: [`u${i}`] } }) });
      expect(res.status).toBe(201);
    }
  });
  afterAll(async () => {
    // A server that does not exit after SIGTERM is a finding: say so with its last log lines.
    const stopped = await Promise.race([served.stop().then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 20_000))]);
    if (!stopped) served.process.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    if (!stopped) throw new Error(`teamkeys serve did not exit within 20 s of SIGTERM after the load; its log ends:\n${served.stderr().slice(-3000)}`);
  });

  it(`serves ${seconds} s of reads, lists, creates, patches and watches with zero errors`, async () => {
    const start = ((await (await fetch(`${v1}/teams?limit=1`, { headers })).json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    // Watchers count the creates they see; each must see every one.
    const watchers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const ac = new AbortController();
        const res = await fetch(`${v1}/teams?watch=true&resourceVersion=${start}&timeoutSeconds=${seconds + 60}`, { headers, signal: ac.signal });
        const state = { added: 0, ended: false, stop: () => ac.abort() };
        void (async () => {
          const decoder = new TextDecoder();
          let buffer = '';
          try {
            for await (const chunk of res.body!) {
              buffer += decoder.decode(chunk as Uint8Array, { stream: true });
              let nl: number;
              while ((nl = buffer.indexOf('\n')) >= 0) {
                if ((JSON.parse(buffer.slice(0, nl)) as { type: string }).type === 'ADDED') state.added++;
                buffer = buffer.slice(nl + 1);
              }
            }
          } catch {
            // aborted at the end
          }
          state.ended = true;
        })();
        return state;
      }),
    );

    let patchNo = 0;
    const url = new URL(v1);
    const base = url.pathname;
    const result = await autocannon({
      url: url.origin,
      connections: 16,
      duration: seconds,
      headers,
      requests: [
        { method: 'GET', setupRequest: (req) => ({ ...req, path: `${base}/teams/seed-${Math.floor(Math.random() * 200)}` }) },
        { method: 'GET', path: `${base}/teams?limit=50` },
        { method: 'POST', path: `${base}/teams`, body: JSON.stringify({ metadata: { generateName: 'load-' }, spec: { displayName: 'Load', users: ['x'] } }) },
        {
          method: 'PATCH',
          headers: { ...headers, 'Content-Type': 'application/merge-patch+json' },
          setupRequest: (req) => ({
            ...req,
            path: `${base}/teams/seed-${Math.floor(Math.random() * 200)}`,
            body: JSON.stringify({ metadata: { labels: { n: String(++patchNo) } } }),
          }),
        },
      ],
    });
    const created = ((await (await fetch(`${v1}/teams?labelSelector=`, { headers })).json()) as { items: { metadata: { name: string } }[] }).items.filter((i) => i.metadata.name.startsWith('load-')).length;
    await new Promise((r) => setTimeout(r, 1000));
    for (const w of watchers) w.stop();

    const figures = {
      generatedAt: new Date().toISOString(),
      seconds,
      connections: 16,
      watchers: watchers.length,
      requests: result.requests.total,
      requestsPerSecond: Math.round(result.requests.average),
      latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
      errors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      created,
      watcherEventsMissing: watchers.reduce((n, w) => n + Math.max(0, created - w.added), 0),
    };
    mkdirSync(join(root, 'bench/results'), { recursive: true });
    writeFileSync(join(root, 'bench/results/load.json'), `${JSON.stringify(figures, null, 2)}\n`);
    process.stdout.write(`load: ${JSON.stringify(figures)}\n`);

    expect(result.requests.total).toBeGreaterThan(seconds * 50);
    expect({ errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx }).toEqual({ errors: 0, timeouts: 0, non2xx: 0 });
    expect(created).toBeGreaterThan(0);
    expect(figures.watcherEventsMissing).toBe(0);
    expect(watchers.every((w) => !w.ended || w.added >= created)).toBe(true);
  });
});
