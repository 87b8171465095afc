/** `teamkeys watch`: its flags; what it runs is in watch-run.ts, loaded only when it runs. */
import type { Command } from 'commander';
import { addDaemonFlags } from '../daemon-setup.js';
import { addFlags, logFormatHelp, targetFlags } from '../flag-specs.js';
import type { WatchFlags } from './watch-run.js';

export function registerWatch(program: Command): void {
  const cmd = program.command('watch').description('keep reconciling: on an interval, on a webhook, on file changes and on drift');
  addFlags(addDaemonFlags(cmd), targetFlags)
    .option('--listen <host:port>', 'address for /healthz, /readyz, /metrics and the POST /sync webhook', '127.0.0.1:9090')
    .option('--state-dir <dir>', 'where git sources are mirrored between cycles', '.teamkeys')
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .option('--log-format <format>', logFormatHelp)
    .action(async (f: WatchFlags) => {
      // The HTTP listener, the file watcher and the metrics load only when watch runs.
      await (await import('./watch-run.js')).watch(f);
    });
}
