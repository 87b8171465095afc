/**
 * `teamkeys diff`: git against live as a unified diff, as `kubectl diff` and `argocd app diff`
 * print it. Exit 0 no differences, 1 differences, 2 (more than 1) an error, as kubectl diff.
 * What it runs is in diff-run.ts, loaded only when it runs.
 */
import type { Command } from 'commander';
import { setFailureExitCode } from '../errors.js';
import { addFlags, pruneFlags, sourceFlags, targetFlags } from '../flag-specs.js';
import { addPolicyFlag } from '../workflow-flags.js';
import type { DiffFlags } from './diff-run.js';

export function registerDiff(program: Command): void {
  const cmd = program
    .command('diff')
    .description('show how the live objects differ from git, as a unified diff (exit 0: none, 1: differences, >1: error)');
  addPolicyFlag(addFlags(cmd, [...sourceFlags, ...targetFlags, ...pruneFlags]))
    .hook('preAction', () => setFailureExitCode(2))
    .action(async (f: DiffFlags) => {
      process.exitCode = await (await import('./diff-run.js')).runDiff(f);
    });
}
