import type { Command } from 'commander';
import { storeFlag, encryptionKeyFileFlag } from '../store-flags.js';
import { flagOption, type OptionsOf } from '../flag-specs.js';
import { resolveResource } from '../resource-names.js';

type Options = OptionsOf<[typeof storeFlag, typeof encryptionKeyFileFlag]>;

/** `teamkeys delete teams NAME...`: deletes from the embedded store (finalizers are honoured). */
export function registerDelete(program: Command): void {
  program
    .command('delete')
    .description('delete Teams or OwnedAccessKeys from the embedded store')
    .argument('<resource>', 'teams or ownedaccesskeys')
    .argument('<names...>', 'names to delete')
    .addOption(flagOption(storeFlag))
    .addOption(flagOption(encryptionKeyFileFlag))
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
