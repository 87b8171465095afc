/** Starts `teamkeys serve` as a real process on a random loopback port, with a kubeconfig for it. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bin } from '../cli/run.js';

export interface Served {
  url: string;
  dir: string;
  kubeconfig: string;
  process: ChildProcess;
  stderr: () => string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startServe(args: string[] = [], opts: { kubeconfigExtra?: string } = {}): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-serve-'));
  const child = spawn(process.execPath, [bin, 'serve', '--listen', '127.0.0.1:0', '--store', 'memory:', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`teamkeys serve did not start in time:\n${stderr}`)), 20_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = line.match(/^teamkeys serving on (\S+)$/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`teamkeys serve exited with ${code}:\n${stderr}`)));
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: teamkeys',
      '  cluster:',
      `    server: ${url}`,
      ...(opts.kubeconfigExtra ? [opts.kubeconfigExtra] : []),
      'contexts:',
      '- name: teamkeys',
      '  context: {cluster: teamkeys, user: teamkeys}',
      'current-context: teamkeys',
      'users:',
      '- name: teamkeys',
      '  user: {}',
      '',
    ].join('\n'),
  );
  return {
    url,
    dir,
    kubeconfig,
    process: child,
    stderr: () => stderr,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => {
          rmSync(dir, { recursive: true, force: true });
          resolve(code);
        });
        child.kill(signal);
      }),
  };
}

/** The real kubectl; a machine without it fails the test with a message instead of skipping it. */
export function kubectlPath(): string {
  const found = spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).stdout.trim();
  if (!found) throw new Error('kubectl is not installed: these tests drive the real kubectl binary (install kubectl v1.32 and run again)');
  return found;
}

export interface KubectlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function kubectl(served: Served, args: string[], input?: string): KubectlRun {
  const r = spawnSync(kubectlPath(), args, {
    env: { PATH: process.env.PATH ?? '', HOME: served.dir, KUBECONFIG: served.kubeconfig, KUBECTL_EXTERNAL_DIFF: 'diff -u -N' },
    input,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A throwaway self-signed certificate for 127.0.0.1, made with the openssl command. */
export function selfSignedCert(): { cert: string; key: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const r = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`openssl could not make a test certificate (is openssl installed?): ${r.stderr}`);
  return { cert, key, dir };
}
