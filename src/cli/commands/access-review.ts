/** `teamkeys access-review`: who may do what, through which path, from a server (--server) or the embedded store. */
import type { Command } from 'commander';
import { defaultGroup } from '../../api/resources.js';
import type { TargetFlags } from '../gitops-flags.js';
import { storeFlag, encryptionKeyFileFlag } from '../store-flags.js';
import { flagOption } from '../flag-specs.js';

export interface AccessReviewOptions extends TargetFlags {
  output?: string;
  since?: string;
}

export function registerAccessReview(program: Command): void {
  program
    .command('access-review')
    .description('for every user, group, team and subject: what it may do on which objects and through which path, with its keys (needs a reader of everything)')
    .option('--server <url>', 'a teamkeys server, e.g. https://host:8080 (the path /kubernetes/management is added when none is given)')
    .option('--token-file <file>', 'file holding the access key for --server (or set TEAMKEYS_TOKEN); it must read every Team and key')
    .option('--ca-file <file>', 'PEM certificate to trust for --server')
    .option('--api-group <group>', 'API group the kinds are served under', defaultGroup)
    .addOption(flagOption(storeFlag))
    .addOption(flagOption(encryptionKeyFileFlag))
    .option('-o, --output <format>', 'markdown, csv or json', 'markdown')
    .option('--since <file>', 'a previous review (-o json): show what was granted and revoked since')
    .action(async (opts: AccessReviewOptions) => {
      const { runAccessReview } = await import('./access-review-run.js');
      await runAccessReview(opts);
    });
}
