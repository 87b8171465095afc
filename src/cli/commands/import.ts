import { access, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { defaultGroup } from '../../api/resources.js';
import { storeOptionHelp } from '../store-flags.js';
import { CliError } from '../errors.js';
import { openClient, type GitopsFlags } from '../gitops-flags.js';

interface ImportFlags extends Pick<GitopsFlags, 'store' | 'server' | 'tokenFile' | 'caFile' | 'apiGroup'> {
  out: string;
  all?: boolean;
}

/** `teamkeys import --out DIR`: one manifest per live object, for a repository to start from. */
export function registerImport(program: Command): void {
  program
    .command('import')
    .description('write manifests of the live objects no GitOps source manages (teams/NAME.yaml, ownedaccesskeys/NAME.yaml); applying them changes nothing')
    .requiredOption('--out <dir>', 'folder to write the manifests into (existing files are never overwritten)')
    .option('--all', 'import objects managed by a GitOps source too')
    .option('--store <url>', storeOptionHelp)
    .option('--server <url>', 'a teamkeys (or compatible) server, e.g. https://host:8080/kubernetes/management')
    .option('--token-file <file>', 'file holding the access key for --server (or set TEAMKEYS_TOKEN)')
    .option('--ca-file <file>', 'PEM certificate to trust for --server')
    .option('--api-group <group>', 'API group the kinds are served under', defaultGroup)
    .action(async (f: ImportFlags) => {
      const client = await openClient(f);
      try {
        const { importObjects } = await import('../../gitops/import.js');
        const { files, skipped } = await importObjects(client, { all: f.all === true });
        // Nothing is written when any file is already there: an import never edits a repository.
        const taken = (await Promise.all(files.map(async (file) => ((await access(join(f.out, file.path)).then(() => true, () => false)) ? file.path : undefined)))).filter(Boolean);
        if (taken.length > 0) throw new CliError(`${taken.length} file(s) already exist in ${f.out} (${taken.slice(0, 5).join(', ')}${taken.length > 5 ? ', ...' : ''}): nothing was written; import into an empty folder`);
        for (const file of files) {
          await mkdir(dirname(join(f.out, file.path)), { recursive: true });
          await writeFile(join(f.out, file.path), file.text, { flag: 'wx' });
        }
        for (const s of skipped) process.stdout.write(`skipped ${s.kind}/${s.name}: ${s.reason}\n`);
        process.stdout.write(`Imported ${files.length} object(s) into ${f.out}${skipped.length ? `, ${skipped.length} skipped` : ''}.\n`);
      } finally {
        await client.close();
      }
    });
}
