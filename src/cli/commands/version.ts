/** `teamkeys version`: the package version and the git commit it was built from (dist/build-info.json, written by the build). */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { packageFile, packageVersion } from '../../package-files.js';
import { CliError } from '../errors.js';

export interface BuildInfo {
  version: string;
  commit: string;
  dirty?: boolean;
}

/** What the build recorded; a dist/ built without scripts/after-build.mjs knows only its package version. */
export function buildInfo(): BuildInfo {
  try {
    const info = JSON.parse(readFileSync(packageFile('dist/build-info.json'), 'utf8')) as Record<string, unknown>;
    return { version: String(info.version), commit: String(info.commit || 'unknown'), ...(info.dirty === true ? { dirty: true } : {}) };
  } catch {
    return { version: packageVersion(), commit: 'unknown' };
  }
}

export function registerVersion(program: Command): void {
  program
    .command('version')
    .description('print the version and the git commit this build was made from')
    .option('-o, --output <format>', 'text (default), json or yaml')
    .action(async (opts: { output?: string }) => {
      const info = { ...buildInfo(), node: process.version };
      const output = opts.output ?? 'text';
      if (output === 'json') process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
      else if (output === 'yaml') process.stdout.write(stringify(info));
      else if (output === 'text') process.stdout.write(`teamkeys ${info.version} (commit ${info.commit}${info.dirty ? ', with uncommitted changes' : ''}; node ${info.node})\n`);
      else throw new CliError(`--output must be text, json or yaml, not "${output}"`);
    });
}
