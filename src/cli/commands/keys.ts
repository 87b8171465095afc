/** `teamkeys keys`: the access keys, with owner, age, last use, expiry, scope and rotation, from a server or the embedded store. */
import type { Command } from 'commander';
import { addFlags, targetFlags } from '../flag-specs.js';
import type { KeysFlags } from './keys-run.js';

export function registerKeys(program: Command): void {
  addFlags(
    program
      .command('keys')
      .description('list access keys: type, owner, age, last use, expiry, scope and rotation; filter by expiry, disuse or owner')
      .option('--expiring <duration>', 'only keys that expire within this time, e.g. 14d (expired keys not yet removed included)')
      .option('--unused <duration>', 'only keys not used for this long (never used: since created), e.g. 90d')
      .option('--user <user>', "only this user's own keys (sign-in keys included)")
      .option('--team <team>', "only this team's keys (not its members' own keys)")
      .option('--subject <subject>', 'only the keys of this subject (e.g. a robot account)')
      .option('-o, --output <format>', 'table, json or markdown (default: table)'),
    targetFlags,
  )
    .action(async (opts: KeysFlags) => {
      const { runKeys } = await import('./keys-run.js');
      await runKeys(opts);
    });
}
