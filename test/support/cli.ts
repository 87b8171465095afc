/** The built teamkeys binary run as a user runs it: at once (`teamkeys`) or while the test goes on (`teamkeysAsync`). */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
export const bin = `${root}dist/cli/main.js`;
/** Embedded commands make an encryption key file on first use: here, not in the repository's .teamkeys/. */
const encryptionKeyFile = join(tmpdir(), `teamkeys-test-${process.pid}`, 'encryption.yaml');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built teamkeys binary, as a user would after npm ci. */
export function teamkeys(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Run {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run "npm run build" (npm test does it first)`);
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd: opts.cwd ?? root,
    env: { ...process.env, TEAMKEYS_STORE: '', TEAMKEYS_ENCRYPTION_KEY_FILE: encryptionKeyFile, ...opts.env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface AsyncRun extends Run {
  /** The signal that ended it (a test's kill, the timeout's SIGKILL), or null when it exited. */
  signal: NodeJS.Signals | null;
}

export interface AsyncOptions {
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Called with the process id as soon as it runs (a test that kills it at a chosen point). */
  onSpawn?: (pid: number) => void;
  /** A shell command run first, in the same process (`ulimit -f 0`), which then execs the CLI. */
  shell?: string;
}

/**
 * The binary run without blocking the test (which serves the server or stand-in it talks to);
 * killed after `timeoutMs`, so a hang fails the test rather than holding the suite.
 */
export function teamkeysAsync(args: string[], opts: AsyncOptions = {}): Promise<AsyncRun> {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run "npm run build" (npm test does it first)`);
  return new Promise((resolve, reject) => {
    const [program, argv] = opts.shell
      ? ['sh', ['-c', `${opts.shell}; exec "$@"`, 'sh', process.execPath, bin, ...args]]
      : [process.execPath, [bin, ...args]];
    const child = spawn(program, argv, {
      cwd: opts.cwd ?? root,
      env: { ...process.env, TEAMKEYS_STORE: '', TEAMKEYS_ENCRYPTION_KEY_FILE: encryptionKeyFile, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export { root };
