/** The flags validate, plan and apply share, and how they become a source, a client and reports. */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ApiClient } from '../client/types.js';
import type { SourceOptions } from '../gitops/source/load.js';
import { renderMarkdown } from '../gitops/report/markdown.js';
import type { Report } from '../gitops/report/report.js';
import { renderText } from '../gitops/report/text.js';
import { reportJson } from '../gitops/report/write.js';
import { stringify } from 'yaml';
import { paintLines } from './colour.js';
import { parseDuration } from './duration.js';
import { wholeNumber } from './flag-values.js';
import { CliError } from './errors.js';
import { addFlags, runFlags, sourceFlags, targetFlags, type OptionsOf } from './flag-specs.js';
import { missingDefaultStore, missingReadStore } from './store-flags.js';

export type SourceFlags = OptionsOf<typeof sourceFlags>;
export type TargetFlags = OptionsOf<typeof targetFlags>;
export type RunFlags = OptionsOf<typeof runFlags>;

export type GitopsFlags = SourceFlags & TargetFlags & RunFlags & {
  output: string;
  detailedExitcode?: boolean;
};

const named = (...names: string[]) => [...targetFlags, ...runFlags].filter((s) => names.includes(s.name));

/** The flags that say where manifests are and how a report is written: all validate needs. */
export function addSourceFlags(cmd: Command): Command {
  return addFlags(cmd, [...sourceFlags, ...named('api-group', 'report-dir')]).option('-o, --output <format>', outputHelp, 'text');
}

/** The source flags, and those of a target to plan and apply against, and how a run writes. */
export function addGitopsFlags(cmd: Command): Command {
  return addFlags(cmd, [...sourceFlags, ...targetFlags, ...runFlags])
    .option('-o, --output <format>', outputHelp, 'text')
    .option('--detailed-exitcode', 'exit 0 when there is nothing to do, 2 when there are changes, 1 on error');
}

/** The run flags, checked before anything is read or written; `prefix` names them as the command does (`sync-`). */
export function runOptions(f: RunFlags, prefix = ''): { prune: boolean; allowEmpty: boolean; maxPrune: number; concurrency: number; keyDir?: string; warnExpiryMs?: number; warnUnusedMs?: number } {
  return {
    prune: f.prune === true,
    allowEmpty: f.allowEmpty === true,
    maxPrune: wholeNumber(`--${prefix}max-prune`, f.maxPrune, { atLeast: 0 }),
    concurrency: wholeNumber(`--${prefix}concurrency`, f.concurrency, { atLeast: 1 }),
    ...(f.warnExpiry !== undefined ? { warnExpiryMs: parseDuration(`--${prefix}warn-expiry`, f.warnExpiry) } : {}),
    ...(f.warnUnused !== undefined ? { warnUnusedMs: parseDuration(`--${prefix}warn-unused`, f.warnUnused) } : {}),
    ...(f.keyDir ? { keyDir: f.keyDir } : {}),
  };
}

export function sourceOptions(f: SourceFlags): SourceOptions {
  return { source: f.source ?? '.', ...(f.ref ? { ref: f.ref } : {}), ...(f.path ? { path: f.path } : {}), ...(f.sourceId ? { sourceId: f.sourceId } : {}) };
}

function checkServerUrl(server: string): void {
  let url: URL | undefined;
  try {
    url = new URL(server);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new CliError(`--server must be an https:// (or http://) URL such as https://host:8080, not "${server}"`);
  }
}

/** `readOnly`: the command's name when it only reads (a missing SQLite store is refused, not made). */
export async function openClient(f: TargetFlags, readOnly?: string): Promise<ApiClient> {
  if (f.server) {
    checkServerUrl(f.server);
    const token = f.tokenFile ? (await readFile(f.tokenFile, 'utf8').catch(() => { throw new CliError(`cannot read --token-file ${f.tokenFile}`); })).trim() : process.env.TEAMKEYS_TOKEN;
    if (!token) throw new CliError('--server needs an access key: --token-file FILE or TEAMKEYS_TOKEN');
    const ca = f.caFile ? await readFile(f.caFile).catch(() => { throw new CliError(`cannot read --ca-file ${f.caFile}`); }) : undefined;
    const { HttpClient } = await import('../client/http.js');
    return new HttpClient({ server: f.server, token, group: f.apiGroup, ...(ca ? { ca } : {}) });
  }
  const missing = missingDefaultStore(f.store) ?? (readOnly ? missingReadStore(f.store, readOnly) : undefined);
  if (missing) throw new CliError(missing);
  // The embedded store (and its native driver) loads only for a command that opens it.
  const [{ EmbeddedClient }, { openEmbedded, storeUrl }] = await Promise.all([import('../client/embedded.js'), import('./embedded.js')]);
  const { registry, audit, close } = await openEmbedded(f.store, { group: f.apiGroup, ...(f.encryptionKeyFile ? { encryptionKeyFile: f.encryptionKeyFile } : {}) });
  return new EmbeddedClient(registry, storeUrl(f.store), close, audit);
}

const outputs = ['text', 'json', 'yaml', 'markdown'];
const outputHelp = 'text, json, yaml or markdown';

/** Refuses an unknown --output before anything runs (an apply must not write and then fail to print). */
export function checkOutput(output: string): void {
  if (!outputs.includes(output)) throw new CliError(`--output must be ${outputHelp}, not "${output}"`);
}

/** The report as --output asks; the text form coloured on a terminal (`colour`). */
export function formatReport(report: Report, output: string, colour = false): string {
  checkOutput(output);
  if (output === 'json') return reportJson(report);
  if (output === 'yaml') return stringify(report);
  if (output === 'markdown') return renderMarkdown(report);
  return paintLines(renderText(report), colour);
}

export { writeReports } from '../gitops/report/write.js';
