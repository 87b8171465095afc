/** Shared pieces of the benchmarks: the load generator, the bare node:http anchor, timing, figures. */
import { spawn, spawnSync } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

export interface Figure {
  name: string;
  value: number;
  unit: string;
  anchor: string;
  anchorValue: number;
  /** value / anchorValue. */
  ratio: number;
  /** The goal for the ratio (or, where the anchor is informative, for the value). */
  target: number;
  /** Which way the ratio (or value) is good. */
  better: 'higher' | 'lower';
  /** What the target applies to. */
  targetOn?: 'ratio' | 'value';
  notes?: string;
}

export interface Settings {
  quick: boolean;
  seconds: number;
  connections: number;
}

export function figure(f: Omit<Figure, 'ratio'>): Figure {
  return { ...f, ratio: Number((f.value / f.anchorValue).toFixed(3)) };
}

export function met(f: Figure): boolean {
  const v = f.targetOn === 'value' ? f.value : f.ratio;
  return f.better === 'higher' ? v >= f.target : v <= f.target;
}

/** Requests per second that autocannon sustains against url (only 2xx responses count). */
export async function load(url: string, s: Settings, opts: { headers?: Record<string, string>; method?: string; body?: string; requests?: autocannon.Request[] } = {}): Promise<number> {
  const result = await autocannon({
    url,
    connections: s.connections,
    duration: s.seconds,
    headers: opts.headers ?? {},
    ...(opts.method ? { method: opts.method as autocannon.Request['method'] } : {}),
    ...(opts.body ? { body: opts.body } : {}),
    ...(opts.requests ? { requests: opts.requests } : {}),
  });
  const ok = result['2xx'];
  return Math.round(ok / s.seconds);
}

/**
 * A bare node:http server in its own process returning exactly these bytes: the ceiling. With
 * `leastWork`, it first does what every authenticated GET of the API must and nothing else: the
 * bearer key's SHA-256 looked up in a Map (as the authenticator's index does; 401 when absent),
 * and kube-apiserver's Audit-Id (a random UUID) and Cache-Control headers. No routing, no
 * authorization, no consistent-read check, no metrics: the rate no server of this contract on
 * node:http can pass on this machine (docs/performance.md, "Latest run": `api.get.least-work`).
 */
export async function bareServer(body: string, leastWork?: { key: string }): Promise<{ url: string; pid: number; stop(): void }> {
  const file = join(mkdtempSync(join(tmpdir(), 'teamkeys-bench-body-')), 'body');
  writeFileSync(file, body);
  const script = `
    const { hash, randomUUID } = require('node:crypto');
    const body = require('node:fs').readFileSync(process.env.BODY_FILE);
    const key = process.env.LEAST_WORK_KEY;
    const holders = new Map(key ? [['sha256:' + hash('sha256', key, 'hex'), { name: 'admin' }]] : []);
    const server = require('node:http').createServer((req, res) => {
      if (key) {
        const bearer = req.headers.authorization;
        const who = bearer && bearer.startsWith('Bearer ') ? holders.get('sha256:' + hash('sha256', bearer.slice(7), 'hex')) : undefined;
        if (!who) { res.writeHead(401); res.end(); return; }
        res.setHeader('Audit-Id', randomUUID());
        res.setHeader('Cache-Control', 'no-cache, private');
      }
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
      res.end(body);
    });
    server.keepAliveTimeout = 60000;
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const env = { ...process.env, BODY_FILE: file, ...(leastWork ? { LEAST_WORK_KEY: leastWork.key } : {}) };
  const child = spawn(process.execPath, ['-e', script], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => child.kill() };
}

/** Seconds a command takes, start to exit. */
export function wallSeconds(cmd: string, args: string[], env: Record<string, string> = {}, cwd?: string): { seconds: number; status: number | null; stderr: string } {
  const started = performance.now();
  const r = spawnSync(cmd, args, { env: { ...process.env, ...env }, encoding: 'utf8', cwd, maxBuffer: 256 * 1024 * 1024 });
  return { seconds: (performance.now() - started) / 1000, status: r.status, stderr: r.stderr };
}

export function rssMiB(pid: number): number {
  const out = spawnSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return Number((Number(out) / 1024).toFixed(1));
}

export function tempDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `teamkeys-bench-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Calls `onEvent` with the resourceVersion of each watch event the response streams (one JSON per line). */
export function onWatchEvents(res: IncomingMessage, onEvent: (resourceVersion: string) => void): void {
  let buffer = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const event = JSON.parse(buffer.slice(0, nl)) as { object: { metadata: { resourceVersion: string } } };
      buffer = buffer.slice(nl + 1);
      onEvent(event.object.metadata.resourceVersion);
    }
  });
}
