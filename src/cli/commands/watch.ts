/** `teamkeys watch`: its flags; what it runs is in watch-run.ts, loaded only when it runs. */
import type { Command } from 'commander';
import { addDaemonFlags, type DaemonFlags } from '../daemon-setup.js';
import { addFlags, logFormatHelp, targetFlags, type FlagSpec, type OptionsOf } from '../flag-specs.js';
import type { TargetFlags } from '../gitops-flags.js';

/** What only watch has, besides the daemon's and a target's flags. */
const watchFlags = [
  { name: 'listen', arg: '<host:port>', help: 'address for /healthz, /readyz, /metrics and the POST /sync webhook', default: '127.0.0.1:9090' },
  { name: 'state-dir', arg: '<dir>', help: 'where git sources are mirrored between cycles', default: '.teamkeys' },
  { name: 'log-level', arg: '<level>', help: 'trace, debug, info, warn, error', default: 'info' },
  { name: 'log-format', arg: '<format>', help: logFormatHelp },
] as const satisfies readonly FlagSpec[];

export type WatchFlags = DaemonFlags & TargetFlags & OptionsOf<typeof watchFlags>;

export function registerWatch(program: Command): void {
  const cmd = program.command('watch').description('keep reconciling: on an interval, on a webhook, on file changes and on drift');
  addFlags(addFlags(addDaemonFlags(cmd), targetFlags), watchFlags)
    .action(async (f: WatchFlags) => {
      // The HTTP listener, the file watcher and the metrics load only when watch runs.
      await (await import('./watch-run.js')).watch(f);
    });
}
