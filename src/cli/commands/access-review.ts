/** `teamkeys access-review`: who may do what, through which path, from a server (--server) or the embedded store. */
import type { Command } from 'commander';
import type { TargetFlags } from '../gitops-flags.js';
import { addFlags, targetFlags } from '../flag-specs.js';

export interface AccessReviewOptions extends TargetFlags {
  output?: string;
  since?: string;
}

export function registerAccessReview(program: Command): void {
  addFlags(
    program
      .command('access-review')
      .description('for every user, group, team and subject: what it may do on which objects and through which path, with its keys (needs a reader of everything)'),
    targetFlags,
  )
    .option('-o, --output <format>', 'markdown, csv or json', 'markdown')
    .option('--since <file>', 'a previous review (-o json): show what was granted and revoked since')
    .action(async (opts: AccessReviewOptions) => {
      const { runAccessReview } = await import('./access-review-run.js');
      await runAccessReview(opts);
    });
}
