/**
 * Flag definitions shared by the commands that reconcile: plan and apply, `teamkeys watch`, and
 * the sidecar (`teamkeys serve --sync-source`), which takes the same flags prefixed with `sync-`.
 * One table, so a flag added here reaches every command that reconciles.
 */
import { Option, type Command } from 'commander';
import { defaultGroup } from '../api/resources.js';
import { formatDuration } from '../duration.js';
import { defaultReconcileOptions as reconcileDefaults } from '../gitops/reconcile-defaults.js';
import { encryptionKeyFileFlag, storeFlag } from './store-flags.js';

/** One flag's declaration; a table of them (`as const`) also gives its options' type, `OptionsOf`. */
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

/** `max-prune` -> `maxPrune`, as commander names an option's value. */
type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

/** A flag's value as commander gives it: a switch is true or absent; a value is a string, absent only without a default. */
type ValueOf<S extends FlagSpec> = S extends { arg: string } ? (S extends { default: string } ? string : string | undefined) : boolean | undefined;

/** Optional keys for the values that may be absent, so a handler's type reads as a hand-written one would. */
type Optionalize<T> = { [K in keyof T as undefined extends T[K] ? K : never]?: T[K] } & { [K in keyof T as undefined extends T[K] ? never : K]: T[K] };

/** The options a table of flags gives, keyed by camelCase name: `OptionsOf<typeof runFlags>` has `maxPrune: string`. */
export type OptionsOf<T extends readonly FlagSpec[]> = Optionalize<{ [S in T[number] as Camel<S['name']>]: ValueOf<S> }>;

/** The same options as commander names them on a command whose flags carry `prefix` (`syncMaxPrune`). */
export type PrefixedOptionsOf<T extends readonly FlagSpec[], P extends string> = Optionalize<{
  [S in T[number] as Camel<S extends { unprefixed: true } ? S['name'] : `${P}${S['name']}`>]: ValueOf<S>;
}>;

/** Where the manifests come from. */
export const sourceFlags = [
  {
    name: 'source',
    arg: '<dir|git-url>',
    help: 'folder, local git repository or git URL holding the manifests (default: the current folder)',
    prefixedHelp: 'also keep the store in sync with this folder, local git repository or git URL (the sidecar: API server and daemon in one process)',
  },
  { name: 'ref', arg: '<ref>', help: 'branch, tag or commit to read (reads the source as a git repository)' },
  { name: 'path', arg: '<subdir>', help: 'sub-folder of the source holding the manifests' },
  { name: 'source-id', arg: '<id>', help: 'names this source in the gitops.management.service/source annotation (default: the git remote URL and path; required with --prune outside git)' },
] as const satisfies readonly FlagSpec[];

/** Which server (or embedded store) is reconciled. */
export const targetFlags = [
  storeFlag,
  { ...encryptionKeyFileFlag, unprefixed: true },
  { name: 'server', arg: '<url>', help: 'a teamkeys (or compatible) server, e.g. https://host:8080 (the path /kubernetes/management is added when none is given)' },
  { name: 'token-file', arg: '<file>', help: 'file holding the access key for --server (or set TEAMKEYS_TOKEN)' },
  { name: 'ca-file', arg: '<file>', help: 'PEM certificate to trust for --server (e.g. .teamkeys/tls/cert.pem)' },
  { name: 'api-group', arg: '<group>', help: 'API group the kinds are served under', default: defaultGroup },
] as const satisfies readonly FlagSpec[];

/** What a plan deletes: with the source and --policy, what a saved plan fixes when it is made. */
export const pruneFlags = [
  { name: 'prune', help: 'delete objects this source created that are no longer in it' },
  { name: 'allow-empty', help: 'accept a source with no manifests (with --prune: prune everything this source created)' },
  { name: 'max-prune', arg: '<n>', help: 'refuse a run that would delete more objects than this', default: String(reconcileDefaults.maxPrune) },
] as const satisfies readonly FlagSpec[];

/** How a reconcile writes. */
export const runFlags = [
  ...pruneFlags,
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
] as const satisfies readonly FlagSpec[];

/** Policies every manifest must satisfy (read again on every cycle). */
export const policyFlag = {
  name: 'policy',
  arg: '<dir>',
  help: 'folder of Policy objects (CEL validations) every manifest must satisfy; a violation means nothing is written',
} as const satisfies FlagSpec;

/** What only a daemon does. */
export const daemonFlags = [
  policyFlag,
  { name: 'interval', arg: '<duration>', help: 'time between reconciles (with 10% jitter)', default: '30s' },
  { name: 'self-heal', help: 'revert drift (without it, drift is only reported)', unprefixed: true },
  { name: 'webhook-secret-file', arg: '<file>', help: 'GitHub webhook secret: POST /sync must then carry a valid X-Hub-Signature-256', unprefixed: true },
] as const satisfies readonly FlagSpec[];

/** The flag's name on a command whose reconcile flags carry `prefix`. */
export function flagName(spec: FlagSpec, prefix: string): string {
  return spec.unprefixed ? spec.name : `${prefix}${spec.name}`;
}

/** The commander option of a flag, named `--<prefix><name>` (unless unprefixed); for a chain of `.addOption`. */
export function flagOption(spec: FlagSpec, prefix = ''): Option {
  const help = (prefix && !spec.unprefixed && spec.prefixedHelp) || spec.help;
  const option = new Option(`--${flagName(spec, prefix)}${spec.arg ? ` ${spec.arg}` : ''}`, help);
  return spec.default === undefined ? option : option.default(spec.default);
}

/** Adds the flags, each named `--<prefix><name>` (unless unprefixed). */
export function addFlags(cmd: Command, specs: readonly FlagSpec[], prefix = ''): Command {
  for (const spec of specs) cmd.addOption(flagOption(spec, prefix));
  return cmd;
}

/** The name commander gives a flag's value: `max-prune` -> `maxPrune`. */
export const camelName = (s: string) => s.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/** The values of the flags, keyed by their unprefixed camelCase names (`maxPrune`), as commander parsed them. */
export function readFlags<const T extends readonly FlagSpec[]>(opts: object, specs: T, prefix = ''): OptionsOf<T> {
  const given = opts as Record<string, unknown>;
  // The one place values meet their declared types: commander set exactly these keys from these specs.
  return Object.fromEntries(specs.map((s) => [camelName(s.name), given[camelName(flagName(s, prefix))]]).filter(([, v]) => v !== undefined)) as OptionsOf<T>;
}

export const logFormatHelp = 'json or text (default: text on a terminal, json otherwise); logs go to stderr';
