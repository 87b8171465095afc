/** Starts `teamkeys watch` as a process and finds its listen address. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bin } from '../support/cli.js';

export interface Watcher {
  url: string;
  /** Where it keeps its git mirrors. */
  stateDir: string;
  process: ChildProcess;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts the daemon with its own state directory (git mirrors), removed when it stops; `from`: another built teamkeys than this checkout's. */
export async function startWatch(args: string[], from = bin): Promise<Watcher> {
  const stateDir = mkdtempSync(join(tmpdir(), 'teamkeys-watch-state-'));
  const child = spawn(process.execPath, [from, 'watch', '--listen', '127.0.0.1:0', '--state-dir', stateDir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.on('exit', () => rmSync(stateDir, { recursive: true, force: true }));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`teamkeys watch did not start:\n${stderr}`)), 20_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = line.match(/^teamkeys watch listening on (\S+)$/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`teamkeys watch exited with ${code}:\n${stderr}`)));
  });
  return {
    url,
    stateDir,
    process: child,
    stderr: () => stderr,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
}

/** The one poll-until helper (test/support/eventually.ts), re-exported for the daemon tests. */
export { eventually } from '../support/eventually.js';

/** A metric's value from Prometheus text, or undefined. */
export function metric(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : undefined;
}
