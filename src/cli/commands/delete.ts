import type { Command } from 'commander';
import { encryptionKeyFileHelp, storeOptionHelp } from '../store-flags.js';
import { resolveResource } from '../resource-names.js';

interface Options {
  encryptionKeyFile?: string;
  store?: string;
}

/** `teamkeys delete teams NAME...`: deletes from the embedded store (finalizers are honoured). */
export function registerDelete(program: Command): void {
  program
    .command('delete')
    .description('delete Teams or OwnedAccessKeys from the embedded store')
    .argument('<resource>', 'teams or ownedaccesskeys')
    .argument('<names...>', 'names to delete')
    .option('--store <url>', storeOptionHelp)
    .option('--encryption-key-file <file>', encryptionKeyFileHelp)
    .action(async (resource: string, names: string[], opts: Options) => {
      const info = resolveResource(resource);
      const { withRegistry } = await import('../embedded.js');
      await withRegistry(opts.store, async (registry) => {
        for (const name of names) {
          const { removed } = await registry.byPlural(info.plural)!.delete(name);
          console.log(`${info.singular}.${info.group} "${name}" ${removed ? 'deleted' : 'marked for deletion (finalizers pending)'}`);
        }
      }, opts.encryptionKeyFile);
    });
}
