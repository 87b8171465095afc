import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { ApiError } from '../../api/errors.js';
import { storeOperatorSetter } from '../../api/key-types.js';
import { formatError, parseManifests } from '../../gitops/source/manifests.js';
import { storeFlag, encryptionKeyFileFlag } from '../store-flags.js';
import { flagOption, type OptionsOf } from '../flag-specs.js';
import { CliError } from '../errors.js';
import { expandFiles } from '../files.js';
import { parseOutputFormat, render } from '../output.js';
import { resolveResource } from '../resource-names.js';
import { append } from '../../gitops/append.js';

type Options = OptionsOf<[typeof storeFlag, typeof encryptionKeyFileFlag]> & {
  filename: string[];
  output?: string;
  dryRun?: boolean;
};

/** `teamkeys create -f FILE`: creates every object in the files; reports each failure as file:line:col. */
export function registerCreate(program: Command): void {
  program
    .command('create')
    .description('create the Teams and OwnedAccessKeys in YAML or JSON files, in the embedded store')
    .requiredOption('-f, --filename <path...>', 'files or directories of manifests')
    .addOption(flagOption(storeFlag))
    .addOption(flagOption(encryptionKeyFileFlag))
    .option('-o, --output <format>', 'print the created objects: yaml, json or name (a generated key appears only here)')
    .option('--dry-run', 'validate and show the result without writing')
    .action(async (opts: Options) => {
      const format = opts.output ? parseOutputFormat(opts.output) : undefined;
      const files = await expandFiles(opts.filename);
      let failed = 0;
      const { withRegistry } = await import('../embedded.js');
      await withRegistry(opts.store, async (registry) => {
        const all: (ReturnType<typeof parseManifests>['manifests'][number] & { file: string })[] = [];
        for (const file of files) {
          const { manifests, errors } = parseManifests(await readFile(file, 'utf8'), file);
          for (const e of errors) console.error(formatError(e));
          failed += errors.length;
          append(all, manifests.map((m) => ({ ...m, file })));
        }
        // Teams first: a team key is refused until its team exists, whatever order the files list.
        const rank = (m: (typeof all)[number]) => (String(m.object.kind ?? '').toLowerCase().startsWith('team') ? 0 : 1);
        for (const m of [...all].sort((a, b) => rank(a) - rank(b))) {
          const file = m.file;
          try {
            const info = resolveResource(String(m.object.kind ?? ''));
            const registryOf = registry.byPlural(info.plural)!;
            const { object, warnings } = await registryOf.create(m.object, { dryRun: opts.dryRun ?? false, fieldManager: 'teamkeys', valueSetBy: storeOperatorSetter });
            for (const w of warnings) console.error(`${file}:${m.line}:${m.column}: warning: ${w}`);
            if (format) console.log(render([object], format, false));
            else console.log(`${info.singular}.${info.group}/${object.metadata.name} created${opts.dryRun ? ' (dry run)' : ''}`);
          } catch (err) {
            failed++;
            const message =
              err instanceof ApiError ? `Error from server (${err.reason}): ${err.message}` : err instanceof CliError ? err.message : String(err);
            console.error(formatError({ file, line: m.line, column: m.column, message }));
          }
        }
      }, opts.encryptionKeyFile);
      if (failed > 0) throw new CliError(`${failed} object(s) could not be created`);
    });
}
