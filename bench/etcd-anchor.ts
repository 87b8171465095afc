/**
 * The anchor issue 38 names for durable creates: raw etcd puts of the same row, to etcd (the store
 * kube-apiserver runs on) started here as a process of its own on loopback, with its default fsync
 * of every write batch, driven by the npm `etcd3` client (gRPC, as kube-apiserver talks to it).
 * etcd comes from Debian's `etcd-server` package; without it on PATH the figure fails, saying so.
 */
import { spawn, spawnSync } from 'node:child_process';
import { Etcd3 } from 'etcd3';
import { freePort } from '../test/support/free-port.js';
import { tempDir } from './lib.js';

/** etcd running, for loads taken in turns with another's: `puts` can be called again and again. */
export interface Etcd {
  version: string;
  /** Puts per second of the row under new keys, as many in flight as started with: those completed in `seconds`. */
  puts(seconds: number): Promise<number>;
  stop(): Promise<void>;
}

/** etcd's version, or an error saying how to install it: asked before any load runs. */
export function etcdVersion(): string {
  const r = spawnSync('etcd', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error("api.create's anchor needs etcd on PATH (Debian: apt-get install etcd-server); `etcd --version` failed");
  return /etcd Version: (\S+)/.exec(r.stdout)?.[1] ?? 'unknown';
}

/**
 * Waits for etcd's /health over plain HTTP (bounded: 20 s). Not through the gRPC client: its
 * circuit breaker opens after three failed calls and stays open for 5 s.
 */
async function healthy(url: string, exited: () => boolean, said: () => string): Promise<void> {
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    if (exited()) throw new Error(`etcd exited before it was ready: ${said()}`);
    const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`etcd was not healthy within 20 s at ${url}: ${said()}`);
}

/**
 * etcd started on loopback and healthy, with a client connected, to put `row` under new keys,
 * `inFlight` at a time. Its first second of puts is a warm-up not counted (which the API's figure does not get: the anchor is the stricter).
 */
export async function startEtcd(row: string, inFlight: number): Promise<Etcd> {
  const version = etcdVersion();
  const [client, peer] = [await freePort(), await freePort()];
  const at = (port: number) => `http://127.0.0.1:${port}`;
  const tmp = tempDir('etcd');
  let stderr = '';
  const etcd = spawn(
    'etcd',
    ['--name', 'bench', '--data-dir', tmp.dir, '--listen-client-urls', at(client), '--advertise-client-urls', at(client), '--listen-peer-urls', at(peer), '--initial-advertise-peer-urls', at(peer), '--initial-cluster', `bench=${at(peer)}`, '--logger', 'zap', '--log-level', 'error'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let failed: Error | undefined;
  etcd.on('error', (err) => (failed = err));
  etcd.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exited = new Promise<void>((resolve) => etcd.once('close', () => resolve()));
  let kv: Etcd3 | undefined;
  const stop = async () => {
    kv?.close();
    etcd.kill('SIGTERM');
    const killed = setTimeout(() => etcd.kill('SIGKILL'), 5000);
    if (!failed) await exited;
    clearTimeout(killed);
    tmp.cleanup();
  };
  try {
    await healthy(at(client), () => failed !== undefined || etcd.exitCode !== null || etcd.signalCode !== null, () => failed?.message ?? (stderr.trim() || 'no output'));
    kv = new Etcd3({ hosts: `127.0.0.1:${client}` });
    const store = kv;
    // Every put a new key, as every create is a new object.
    let n = 0;
    const puts = async (seconds: number) => {
      const end = performance.now() + seconds * 1000;
      let done = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (performance.now() < end) {
            await store.put(`/teams/raw-${n++}`).value(row);
            if (performance.now() <= end) done++;
          }
        }),
      );
      return Math.round(done / seconds);
    };
    await puts(1);
    return { version, puts, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
