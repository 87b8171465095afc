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

/**
 * The binary run without blocking the test (which serves the server or stand-in it talks to);
 * killed after `timeoutMs`, so a hang fails the test rather than holding the suite.
 */
export function teamkeysAsync(args: string[], opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Run> {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run "npm run build" (npm test does it first)`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: opts.cwd ?? root,
      env: { ...process.env, TEAMKEYS_STORE: '', TEAMKEYS_ENCRYPTION_KEY_FILE: encryptionKeyFile, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export { root };
