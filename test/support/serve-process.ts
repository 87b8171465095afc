/** Starts `teamkeys serve` as a real process on a random loopback port, with a kubeconfig for it. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { bin } from './cli.js';

export interface Served {
  url: string;
  dir: string;
  /** kubectl's kubeconfig: the one the server wrote (self-signed TLS), or one written here. */
  kubeconfig: string;
  /** The administrator's key, as the server wrote it to its state directory. */
  adminKey: string;
  /** The encryption key file it seals with (shared by the servers of one SQLite file). */
  encryptionKeyFile: string;
  process: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * The encryption key file of the servers on a SQLite file: one beside it, as a deployment keeps
 * one key file for every server of a store (a server with other keys is refused on it), unless
 * the test names one.
 */
function sharedKeyFile(args: string[]): string | undefined {
  const at = args.lastIndexOf('--encryption-key-file');
  if (at >= 0) return args[at + 1];
  const store = args[args.lastIndexOf('--store') + 1];
  return args.includes('--store') && store?.startsWith('sqlite:') ? `${store.slice('sqlite:'.length)}.encryption.yaml` : undefined;
}

/**
 * Starts a server with its own state directory. By default it serves HTTPS with the self-signed
 * certificate it makes, and kubectl uses the kubeconfig it writes (kubectl sends keys only over TLS).
 */
export async function startServe(args: string[] = [], opts: { kubeconfigExtra?: string; env?: Record<string, string> } = {}): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-serve-'));
  const encryptionKeyFile = sharedKeyFile(args) ?? join(dir, 'encryption.yaml');
  const keyArgs = args.includes('--encryption-key-file') ? [] : ['--encryption-key-file', encryptionKeyFile];
  const child = spawn(process.execPath, [bin, 'serve', '--listen', '127.0.0.1:0', '--store', 'memory:', '--state-dir', dir, ...keyArgs, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TEAMKEYS_ADMIN_KEY: '', ...opts.env },
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`teamkeys serve did not start in time:\n${stderr}`)), 20_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout += `${line}\n`;
      const m = line.match(/^teamkeys serving on (\S+)$/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`teamkeys serve exited with ${code}:\n${stderr}`)));
  });
  const adminKey = opts.env?.TEAMKEYS_ADMIN_KEY || readFileSync(join(dir, 'admin.key'), 'utf8').trim();
  let kubeconfig = join(dir, 'kubeconfig');
  if (!existsSync(kubeconfig)) {
    kubeconfig = join(dir, 'kubeconfig.test');
    writeFileSync(kubeconfig, kubeconfigText(url, adminKey, opts.kubeconfigExtra));
  }
  return {
    url,
    dir,
    kubeconfig,
    adminKey,
    encryptionKeyFile,
    process: child,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        const done = (code: number | null) => {
          rmSync(dir, { recursive: true, force: true });
          resolve(code);
        };
        // A process ended by a signal has signalCode set and exitCode null.
        if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode);
        child.once('exit', done);
        child.kill(signal);
      }),
  };
}

function kubeconfigText(url: string, token: string, clusterExtra?: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: teamkeys',
    '  cluster:',
    `    server: ${url}`,
    ...(clusterExtra ? [clusterExtra] : []),
    'contexts:',
    '- name: teamkeys',
    '  context: {cluster: teamkeys, user: teamkeys}',
    'current-context: teamkeys',
    'users:',
    '- name: teamkeys',
    '  user:',
    `    token: ${token}`,
    '',
  ].join('\n');
}

/** Writes a file (a manifest for kubectl -f) into the server's directory; returns its path. */
export function servedFile(served: Served, name: string, text: string): string {
  const path = join(served.dir, name);
  writeFileSync(path, text);
  return path;
}

/** A copy of the server's kubeconfig that authenticates with another key. */
export function kubeconfigWithToken(served: Served, token: string, name: string): string {
  const config = parseYaml(readFileSync(served.kubeconfig, 'utf8')) as { users: { user: Record<string, string> }[] };
  config.users[0]!.user = { token };
  const path = join(served.dir, `kubeconfig.${name}`);
  writeFileSync(path, stringifyYaml(config));
  return path;
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

export function kubectl(served: Served, args: string[], opts: { input?: string; kubeconfig?: string; env?: Record<string, string> } = {}): KubectlRun {
  const { input } = opts;
  const r = spawnSync(kubectlPath(), args, {
    env: { PATH: process.env.PATH ?? '', HOME: served.dir, KUBECONFIG: opts.kubeconfig ?? served.kubeconfig, KUBECTL_EXTERNAL_DIFF: 'diff -u -N', ...opts.env },
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

/**
 * Creates each key with kubectl (its name and its spec as inline YAML) and returns, per key name, a
 * kubeconfig that authenticates with the value the server generated.
 */
export function kubeconfigsForKeys(served: Served, keys: Record<string, string>): Record<string, string> {
  const kubeconfigs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(keys)) {
    const created = kubectl(served, ['create', '-f', '-', '-o', 'jsonpath={.spec.key}'], {
      input: `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata: {name: ${name}}\nspec: ${spec}\n`,
    });
    if (created.code !== 0) throw new Error(`kubectl create of key ${name} exited ${created.code}: ${created.stderr}`);
    kubeconfigs[name] = kubeconfigWithToken(served, created.stdout.trim(), name);
  }
  return kubeconfigs;
}
