/**
 * `teamkeys scan PATH...`: finds access keys in the teamkeys format in files, folders or stdin
 * (`-`), as a pre-commit hook or a CI step would run it. Exit 0 none, 1 keys found, 2 an error.
 * What it runs is in scan-run.ts, loaded only when it runs.
 */
import type { Command } from 'commander';
import { setFailureExitCode } from '../errors.js';
import { addFlags, targetFlags } from '../flag-specs.js';
import type { ScanFlags } from './scan-run.js';

/** Only the remote flags: without a server the keys found are not named (the embedded store is not opened). */
const remoteFlags = targetFlags.filter((f) => ['server', 'token-file', 'ca-file', 'api-group'].includes(f.name));

export function registerScan(program: Command): void {
  const cmd = program
    .command('scan')
    .argument('<path...>', 'files or folders to scan; - reads stdin')
    .description('find teamkeys access keys in files (file:line:col, never the value; with --server, the key names the caller may read). Exit 0: none, 1: keys found, >1: error');
  addFlags(cmd, remoteFlags)
    .hook('preAction', () => setFailureExitCode(2))
    .action(async (paths: string[], f: ScanFlags) => {
      process.exitCode = await (await import('./scan-run.js')).runScan(paths, f);
    });
}
