/**
 * The one place a sync daemon is built, for `teamkeys watch` and for the sidecar (`teamkeys serve
 * --sync-source`): both read the same flags (the sidecar's prefixed `sync-`) into one DaemonConfig.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { DaemonOptions } from '../daemon/daemon.js';
import type { SourceOptions } from '../gitops/source/load.js';
import { parseDuration } from './duration.js';
import { CliError } from './errors.js';
import { addFlags, daemonFlags, readFlags, runFlags, sourceFlags, type OptionsOf, type PrefixedOptionsOf } from './flag-specs.js';
import { runOptions, sourceOptions } from './gitops-flags.js';
import { keyDeliveryFromEnv } from '../gitops/keys/github-secrets.js';

/** Every flag a daemon reads, in one table: its options' type is derived from it. */
const daemonTable = [...sourceFlags, ...runFlags, ...daemonFlags] as const;

/** The daemon's options as `teamkeys watch` names them; the sidecar's carry the `sync-` prefix. */
export type DaemonFlags = OptionsOf<typeof daemonTable>;
export type SidecarFlags = PrefixedOptionsOf<typeof daemonTable, 'sync-'>;

/** Everything a daemon is built from, checked. */
export interface DaemonConfig extends Omit<DaemonOptions, 'client' | 'metrics' | 'log' | 'onCycle'> {
  webhookSecret?: string;
}

/** Adds the source, run and daemon flags (`--sync-source`, `--sync-prune`... with prefix `sync-`). */
export function addDaemonFlags(cmd: Command, prefix = ''): Command {
  return addFlags(cmd, daemonTable, prefix);
}

/** Whether the command was given a source to sync (the sidecar runs only then). */
export function hasSource(opts: object, prefix = ''): boolean {
  return readFlags(opts, sourceFlags, prefix).source !== undefined;
}

/** The daemon flags checked, without reading anything: the webhook secret is still a file. */
export interface DaemonSettings extends Omit<DaemonConfig, 'webhookSecret'> {
  webhookSecretFile?: string;
}

/** Checks the daemon flags; `stateDir` holds git mirrors (and, when not given, keys and reports). Reads no file. */
export function daemonSettings(opts: object, prefix: string, stateDir: string, defaults: { keyDir?: string; reportDir?: string } = {}, env: NodeJS.ProcessEnv = process.env): DaemonSettings {
  const f = readFlags(opts, daemonTable, prefix);
  const run = runOptions(f, prefix);
  const keyDir = f.keyDir ?? defaults.keyDir;
  const reportDir = f.reportDir ?? defaults.reportDir;
  const source: SourceOptions = { ...sourceOptions(f), mirrorDir: join(stateDir, 'mirrors') };
  return {
    source,
    intervalMs: parseDuration(`--${prefix}interval`, f.interval),
    selfHeal: f.selfHeal === true,
    ...run,
    ...(keyDir ? { keyDir } : {}),
    ...(reportDir ? { reportDir } : {}),
    ...(f.webhookSecretFile ? { webhookSecretFile: f.webhookSecretFile } : {}),
    ...(f.policy ? { policyDir: f.policy } : {}),
    ...keyDeliveryFromEnv(env),
  };
}

/** The daemon's config, with the webhook secret read from its file. */
export async function readDaemonConfig(settings: DaemonSettings): Promise<DaemonConfig> {
  const { webhookSecretFile, ...config } = settings;
  if (!webhookSecretFile) return config;
  const webhookSecret = (await readFile(webhookSecretFile, 'utf8').catch(() => { throw new CliError(`cannot read --webhook-secret-file ${webhookSecretFile}`); })).trim();
  return { ...config, ...(webhookSecret ? { webhookSecret } : {}) };
}

/** Reads and checks the daemon flags (settings, then the secret file). */
export async function daemonConfig(opts: object, prefix: string, stateDir: string, defaults: { keyDir?: string; reportDir?: string } = {}): Promise<DaemonConfig> {
  return readDaemonConfig(daemonSettings(opts, prefix, stateDir, defaults));
}
