/** The flags validate, plan and apply share, and how they become a source, a client and reports. */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { defaultGroup } from '../api/resources.js';
import { EmbeddedClient } from '../client/embedded.js';
import { HttpClient } from '../client/http.js';
import type { ApiClient } from '../client/types.js';
import { githubSecretsFromEnv, type KeyDelivery } from '../gitops/keys/github-secrets.js';
import type { SourceOptions } from '../gitops/source/load.js';
import { renderMarkdown } from '../gitops/report/markdown.js';
import type { Report } from '../gitops/report/report.js';
import { renderText } from '../gitops/report/text.js';
import { encryptionKeyFileHelp, openEmbedded, storeOptionHelp, storeUrl } from './embedded.js';
import { CliError } from './errors.js';

export interface GitopsFlags {
  source: string;
  ref?: string;
  path?: string;
  sourceId?: string;
  store?: string;
  encryptionKeyFile?: string;
  server?: string;
  tokenFile?: string;
  caFile?: string;
  apiGroup: string;
  prune?: boolean;
  allowEmpty?: boolean;
  maxPrune: string;
  reportDir?: string;
  output: string;
  concurrency: string;
  keyDir?: string;
  detailedExitcode?: boolean;
}

/** The flags that say where manifests are and how a report is written: all validate needs. */
export function addSourceFlags(cmd: Command): Command {
  return cmd
    .option('--source <dir|git-url>', 'folder, local git repository or git URL holding the manifests', '.')
    .option('--ref <ref>', 'branch, tag or commit to read (reads the source as a git repository)')
    .option('--path <subdir>', 'sub-folder of the source holding the manifests')
    .option('--source-id <id>', 'names this source in the gitops.management.service/source annotation (default: from the source)')
    .option('--api-group <group>', 'API group the kinds are served under', defaultGroup)
    .option('--report-dir <dir>', 'write report.json and report.md here')
    .option('-o, --output <format>', 'text, json or markdown', 'text');
}

/** The source flags, and those of a target to plan and apply against (plan, apply, watch). */
export function addGitopsFlags(cmd: Command): Command {
  return addSourceFlags(cmd)
    .option('--store <url>', storeOptionHelp)
    .option('--encryption-key-file <file>', encryptionKeyFileHelp)
    .option('--server <url>', 'a teamkeys (or compatible) server, e.g. https://host:8080/kubernetes/management')
    .option('--token-file <file>', 'file holding the access key for --server (or set TEAMKEYS_TOKEN)')
    .option('--ca-file <file>', "PEM certificate to trust for --server (e.g. .teamkeys/tls/cert.pem)")
    .option('--prune', 'delete objects this source created that are no longer in it')
    .option('--allow-empty', 'accept a source with no manifests (with --prune: prune everything this source created)')
    .option('--max-prune <n>', 'refuse a run that would delete more objects than this', '50')
    .option('--concurrency <n>', 'objects written in parallel', '8')
    .option('--key-dir <dir>', 'write keys the server generates for new access keys here, one 0600 file each')
    .option('--detailed-exitcode', 'exit 0 when there is nothing to do, 2 when there are changes, 1 on error');
}

/** Key delivery to GitHub secrets when GITHUB_TOKEN is set (GITHUB_API_URL picks the API). */
export function withKeyDelivery(): { keyDelivery?: KeyDelivery } {
  const delivery = githubSecretsFromEnv();
  return delivery ? { keyDelivery: delivery } : {};
}

export function count(flag: string, value: string, min = 0): number {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new CliError(`${flag} must be a whole number of at least ${min}, not "${value}"`, 2);
  return Number(value);
}

export function sourceOptions(f: GitopsFlags): SourceOptions {
  return { source: f.source, ...(f.ref ? { ref: f.ref } : {}), ...(f.path ? { path: f.path } : {}), ...(f.sourceId ? { sourceId: f.sourceId } : {}) };
}

/** The target the flags name: a server over HTTP, or the embedded store. */
export async function openClient(f: Pick<GitopsFlags, 'store' | 'server' | 'tokenFile' | 'caFile' | 'apiGroup' | 'encryptionKeyFile'>): Promise<ApiClient> {
  if (f.server) {
    const token = f.tokenFile ? (await readFile(f.tokenFile, 'utf8').catch(() => { throw new CliError(`cannot read --token-file ${f.tokenFile}`); })).trim() : process.env.TEAMKEYS_TOKEN;
    if (!token) throw new CliError('--server needs an access key: --token-file FILE or TEAMKEYS_TOKEN', 2);
    const ca = f.caFile ? await readFile(f.caFile).catch(() => { throw new CliError(`cannot read --ca-file ${f.caFile}`); }) : undefined;
    return new HttpClient({ server: f.server, token, group: f.apiGroup, ...(ca ? { ca } : {}) });
  }
  const { registry, audit, close } = await openEmbedded(f.store, { group: f.apiGroup, ...(f.encryptionKeyFile ? { encryptionKeyFile: f.encryptionKeyFile } : {}) });
  return new EmbeddedClient(registry, storeUrl(f.store), close, audit);
}

export function formatReport(report: Report, output: string): string {
  if (output === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  if (output === 'markdown') return renderMarkdown(report);
  if (output === 'text') return renderText(report);
  throw new CliError(`--output must be text, json or markdown, not "${output}"`, 2);
}

export { writeReports } from '../gitops/report/write.js';
