import type { Command } from 'commander';
import type { KubeObject } from '../../api/types.js';
import { encryptionKeyFileHelp, storeOptionHelp } from '../store-flags.js';
import { parseOutputFormat, render } from '../output.js';
import { resolveResource } from '../resource-names.js';

interface Options {
  encryptionKeyFile?: string;
  store?: string;
  output?: string;
  selector?: string;
}

/** `teamkeys get teams [NAME...]`: reads the embedded store, as kubectl get reads a server. */
export function registerGet(program: Command): void {
  program
    .command('get')
    .description('list or show Teams and OwnedAccessKeys in the embedded store')
    .argument('<resource>', 'teams, ownedaccesskeys (or team, tm, ownedaccesskey, oak)')
    .argument('[names...]', 'names to show; all when none')
    .option('--store <url>', storeOptionHelp)
    .option('--encryption-key-file <file>', encryptionKeyFileHelp)
    .option('-o, --output <format>', 'table (default), wide, yaml, json or name')
    .option('-l, --selector <selector>', 'label selector, e.g. env=prod,tier in (gold)')
    .action(async (resource: string, names: string[], opts: Options) => {
      const info = resolveResource(resource);
      const format = parseOutputFormat(opts.output);
      const { withRegistry } = await import('../embedded.js');
      await withRegistry(opts.store, async (registry) => {
        const registryOf = registry.byPlural(info.plural)!;
        let objects: KubeObject[];
        if (names.length > 0) objects = await Promise.all(names.map((n) => registryOf.get(n)));
        else objects = (await registryOf.list(opts.selector ? { labelSelector: opts.selector } : {})).items;
        console.log(render(objects, format, names.length !== 1));
      }, opts.encryptionKeyFile);
    });
}
