import { access, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { addFlags, targetFlags } from '../flag-specs.js';
import { CliError } from '../errors.js';
import { openClient, type GitopsFlags } from '../gitops-flags.js';

interface ImportFlags extends Pick<GitopsFlags, 'store' | 'server' | 'tokenFile' | 'caFile' | 'apiGroup'> {
  out: string;
  all?: boolean;
  verbose?: boolean;
}

/** `; skipped 619: 612 managed by GitOps source x (--all imports it too), 7 being deleted`: one line however many. */
function skippedText(skipped: { reason: string }[], listed: boolean): string {
  if (skipped.length === 0) return '';
  const byReason = new Map<string, number>();
  for (const s of skipped) byReason.set(s.reason, (byReason.get(s.reason) ?? 0) + 1);
  const reasons = [...byReason].sort(([, a], [, b]) => b - a).map(([reason, n]) => `${n} ${reason}`);
  return `; skipped ${skipped.length}: ${reasons.join(', ')}${listed ? '' : ' (--verbose lists each)'}`;
}

/** `teamkeys import --out DIR`: one manifest per live object, for a repository to start from. */
export function registerImport(program: Command): void {
  addFlags(
    program
      .command('import')
      .description('write manifests of the live objects no GitOps source manages (teams/NAME.yaml, ownedaccesskeys/NAME.yaml); applying them changes nothing')
      .requiredOption('--out <dir>', 'folder to write the manifests into (existing files are never overwritten)')
      .option('--all', 'import objects managed by a GitOps source too')
      .option('-v, --verbose', 'list each object skipped, with why (by default one line counts them by reason)'),
    targetFlags,
  )
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
        if (f.verbose) for (const s of skipped) process.stdout.write(`skipped ${s.kind}/${s.name}: ${s.reason}\n`);
        process.stdout.write(`Imported ${files.length} object(s) into ${f.out}${skippedText(skipped, f.verbose === true)}.\n`);
      } finally {
        await client.close();
      }
    });
}
