/**
 * The anchor issue 38 names for durable creates: raw etcd puts of the same row, 32 in flight, to
 * etcd (the store kube-apiserver runs on) started here as a process of its own on loopback, with
 * its default fsync of every write batch, driven by the npm `etcd3` client (gRPC, as kube-apiserver
 * talks to it). etcd comes from Debian's `etcd-server` package; without it on PATH the figure fails.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { Etcd3 } from 'etcd3';
import { tempDir } from './lib.js';

export interface EtcdPuts {
  perSecond: number;
  version: string;
}

/** A loopback port free a moment ago (etcd takes its ports by number). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function etcdVersion(): string {
  const r = spawnSync('etcd', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error("api.create's anchor needs etcd on PATH (Debian: apt-get install etcd-server); `etcd --version` failed");
  return /etcd Version: (\S+)/.exec(r.stdout)?.[1] ?? 'unknown';
}

/** Puts per second of `row` under new keys, `inFlight` at a time, for `seconds`, after one second of warm-up. */
export async function etcdPuts(row: string, seconds: number, inFlight = 32): Promise<EtcdPuts> {
  const version = etcdVersion();
  const tmp = tempDir('etcd');
  const [client, peer] = [await freePort(), await freePort()];
  const at = (port: number) => `http://127.0.0.1:${port}`;
  const etcd = spawn(
    'etcd',
    ['--name', 'bench', '--data-dir', tmp.dir, '--listen-client-urls', at(client), '--advertise-client-urls', at(client), '--listen-peer-urls', at(peer), '--initial-advertise-peer-urls', at(peer), '--initial-cluster', `bench=${at(peer)}`, '--log-level', 'error', '--logger', 'zap'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => etcd.once('exit', () => resolve()));
  const kv = new Etcd3({ hosts: `127.0.0.1:${client}` });
  try {
    // Ready when a put is acknowledged (bounded: 100 tries 100 ms apart).
    for (let tries = 0; ; tries++) {
      try {
        await kv.put('/ready').value('1');
        break;
      } catch (err) {
        if (tries >= 100 || etcd.exitCode !== null) throw new Error(`etcd did not start on 127.0.0.1:${client}: ${String(err)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    let n = 0;
    const run = async (ms: number) => {
      const end = performance.now() + ms;
      const before = n;
      await Promise.all(Array.from({ length: inFlight }, async () => {
        while (performance.now() < end) await kv.put(`/teams/raw-${n++}`).value(row);
      }));
      return n - before;
    };
    await run(1000);
    const started = performance.now();
    const puts = await run(seconds * 1000);
    return { perSecond: Math.round(puts / ((performance.now() - started) / 1000)), version };
  } finally {
    kv.close();
    etcd.kill('SIGTERM');
    await exited;
    tmp.cleanup();
  }
}
