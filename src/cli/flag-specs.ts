/**
 * Flag definitions shared by the commands that reconcile: plan and apply, `teamkeys watch`, and
 * the sidecar (`teamkeys serve --sync-source`), which takes the same flags prefixed with `sync-`.
 * One table, so a flag added here reaches every command that reconciles.
 */
import type { Command } from 'commander';
import { defaultGroup } from '../api/resources.js';
import { formatDuration } from '../duration.js';
import { defaultReconcileOptions as reconcileDefaults } from '../gitops/reconcile-defaults.js';
import { encryptionKeyFileHelp, storeOptionHelp } from './store-flags.js';

export interface FlagSpec {
  /** The flag without dashes or prefix: `max-prune`. */
  name: string;
  /** `<n>` for a flag with a value; none for a switch. */
  arg?: string;
  help: string;
  default?: string;
  /** Named the same in the sidecar: not prefixed with `sync-`. */
  unprefixed?: boolean;
  /** The help where the flag is prefixed (the sidecar), when it differs. */
  prefixedHelp?: string;
}

/** Where the manifests come from. */
export const sourceFlags: FlagSpec[] = [
  {
    name: 'source',
    arg: '<dir|git-url>',
    help: 'folder, local git repository or git URL holding the manifests (default: the current folder)',
    prefixedHelp: 'also keep the store in sync with this folder, local git repository or git URL (the sidecar: API server and daemon in one process)',
  },
  { name: 'ref', arg: '<ref>', help: 'branch, tag or commit to read (reads the source as a git repository)' },
  { name: 'path', arg: '<subdir>', help: 'sub-folder of the source holding the manifests' },
  { name: 'source-id', arg: '<id>', help: 'names this source in the gitops.management.service/source annotation (default: the git remote URL and path; required with --prune outside git)' },
];

/** Which server (or embedded store) is reconciled. */
export const targetFlags: FlagSpec[] = [
  { name: 'store', arg: '<url>', help: storeOptionHelp },
  { name: 'encryption-key-file', arg: '<file>', help: encryptionKeyFileHelp, unprefixed: true },
  { name: 'server', arg: '<url>', help: 'a teamkeys (or compatible) server, e.g. https://host:8080 (the path /kubernetes/management is added when none is given)' },
  { name: 'token-file', arg: '<file>', help: 'file holding the access key for --server (or set TEAMKEYS_TOKEN)' },
  { name: 'ca-file', arg: '<file>', help: 'PEM certificate to trust for --server (e.g. .teamkeys/tls/cert.pem)' },
  { name: 'api-group', arg: '<group>', help: 'API group the kinds are served under', default: defaultGroup },
];

/** How a reconcile writes. */
export const runFlags: FlagSpec[] = [
  { name: 'prune', help: 'delete objects this source created that are no longer in it' },
  { name: 'allow-empty', help: 'accept a source with no manifests (with --prune: prune everything this source created)' },
  { name: 'max-prune', arg: '<n>', help: 'refuse a run that would delete more objects than this', default: String(reconcileDefaults.maxPrune) },
  { name: 'concurrency', arg: '<n>', help: 'objects written in parallel', default: String(reconcileDefaults.concurrency) },
  {
    name: 'key-dir',
    arg: '<dir>',
    help: 'write keys the server generates for new access keys here, one 0600 file each',
    prefixedHelp: 'write keys the server generates for new access keys here, one 0600 file each (default: <state dir>/keys)',
  },
  { name: 'report-dir', arg: '<dir>', help: 'write report.json and report.md here', prefixedHelp: 'write report.json and report.md here (default: <state dir>/sync)' },
  { name: 'warn-expiry', arg: '<duration>', help: 'the report lists live keys (Login keys too) that expire within this, and expired keys not yet removed', default: formatDuration(reconcileDefaults.warnExpiryMs) },
  { name: 'warn-unused', arg: '<duration>', help: 'the report lists live keys (Login keys too) last used, or never used and created, longer ago than this', default: formatDuration(reconcileDefaults.warnUnusedMs) },
];

/** Policies every manifest must satisfy (read again on every cycle). */
export const policyFlag: FlagSpec = {
  name: 'policy',
  arg: '<dir>',
  help: 'folder of Policy objects (CEL validations) every manifest must satisfy; a violation means nothing is written',
};

/** What only a daemon does. */
export const daemonFlags: FlagSpec[] = [
  policyFlag,
  { name: 'interval', arg: '<duration>', help: 'time between reconciles (with 10% jitter)', default: '30s' },
  { name: 'self-heal', help: 'revert drift (without it, drift is only reported)', unprefixed: true },
  { name: 'webhook-secret-file', arg: '<file>', help: 'GitHub webhook secret: POST /sync must then carry a valid X-Hub-Signature-256', unprefixed: true },
];

/** The flag's name on a command whose reconcile flags carry `prefix`. */
export function flagName(spec: FlagSpec, prefix: string): string {
  return spec.unprefixed ? spec.name : `${prefix}${spec.name}`;
}

/** Adds the flags, each named `--<prefix><name>` (unless unprefixed). */
export function addFlags(cmd: Command, specs: FlagSpec[], prefix = ''): Command {
  for (const spec of specs) {
    const flag = `--${flagName(spec, prefix)}${spec.arg ? ` ${spec.arg}` : ''}`;
    const help = (prefix && !spec.unprefixed && spec.prefixedHelp) || spec.help;
    if (spec.default === undefined) cmd.option(flag, help);
    else cmd.option(flag, help, spec.default);
  }
  return cmd;
}

/** The values of the flags, keyed by their unprefixed camelCase names (`maxPrune`), as commander parsed them. */
export function readFlags(opts: Record<string, unknown>, specs: FlagSpec[], prefix = ''): Record<string, unknown> {
  const camel = (s: string) => s.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
  return Object.fromEntries(specs.map((s) => [camel(s.name), opts[camel(flagName(s, prefix))]]).filter(([, v]) => v !== undefined));
}

export const logFormatHelp = 'json or text (default: text on a terminal, json otherwise); logs go to stderr';
