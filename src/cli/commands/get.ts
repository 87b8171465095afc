import type { Command } from 'commander';
import { ApiError } from '../../api/errors.js';
import { defaultGroup, type Plural } from '../../api/resources.js';
import type { KubeObject } from '../../api/types.js';
import type { TargetFlags } from '../gitops-flags.js';
import { storeFlag, encryptionKeyFileFlag } from '../store-flags.js';
import { flagOption } from '../flag-specs.js';
import { parseOutputFormat, render } from '../output.js';
import { resolveResource } from '../resource-names.js';

interface Options extends TargetFlags {
  output?: string;
  selector?: string;
}

/** The objects asked for, from a server over HTTP (the selector applied here, as the server would). */
async function fromServer(opts: Options, plural: Plural, names: string[]): Promise<KubeObject[]> {
  const [{ openClient }, { parseLabelSelector }] = await Promise.all([import('../gitops-flags.js'), import('../../api/selectors.js')]);
  const client = await openClient(opts);
  try {
    if (names.length > 0) {
      return await Promise.all(
        names.map(async (n) => {
          const obj = await client.get(plural, n);
          if (!obj) throw new ApiError(404, 'NotFound', `${plural}.${opts.apiGroup} "${n}" not found`);
          return obj;
        }),
      );
    }
    const matches = parseLabelSelector(opts.selector);
    return (await client.list(plural)).filter((o) => !matches || matches(o));
  } finally {
    await client.close();
  }
}

/** `teamkeys get teams [NAME...]`: reads a server (--server) or the embedded store, as kubectl get reads a server. */
export function registerGet(program: Command): void {
  program
    .command('get')
    .description('list or show Teams and OwnedAccessKeys, from a server (--server) or the embedded store')
    .argument('<resource>', 'teams, ownedaccesskeys (or team, tm, ownedaccesskey, oak)')
    .argument('[names...]', 'names to show; all when none')
    .option('--server <url>', 'a teamkeys server, e.g. https://host:8080 (the path /kubernetes/management is added when none is given)')
    .option('--token-file <file>', 'file holding the access key for --server (or set TEAMKEYS_TOKEN)')
    .option('--ca-file <file>', 'PEM certificate to trust for --server')
    .option('--api-group <group>', 'API group the kinds are served under', defaultGroup)
    .addOption(flagOption(storeFlag))
    .addOption(flagOption(encryptionKeyFileFlag))
    .option('-o, --output <format>', 'table (default), wide, yaml, json or name')
    .option('-l, --selector <selector>', 'label selector, e.g. env=prod,tier in (gold)')
    .action(async (resource: string, names: string[], opts: Options) => {
      const info = resolveResource(resource);
      const format = parseOutputFormat(opts.output);
      if (opts.server) {
        console.log(render(await fromServer(opts, info.plural, names), format, names.length !== 1));
        return;
      }
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
