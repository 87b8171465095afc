/** The help and defaults of --store and --encryption-key-file: apart from embedded.ts so a command's flags load no store. */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defaultStoreUrl } from '../store/url.js';
import { encryptionKeyFileName } from './encryption-key-file.js';
import type { FlagSpec } from './flag-specs.js';

export const storeOptionHelp = `store URL: sqlite:PATH, postgres://USER@HOST:PORT/DB or memory: (default: $TEAMKEYS_STORE or ${defaultStoreUrl})`;

/** The key file every command uses unless told otherwise: the default state directory's. */
export const defaultEncryptionKeyFile = join('.teamkeys', encryptionKeyFileName);
export const encryptionKeyFileHelp = `key file that encrypts sealed fields at rest (default: $TEAMKEYS_ENCRYPTION_KEY_FILE or ${defaultEncryptionKeyFile}; made on first use)`;

/** --store, declared once for every command that opens a store (serve gives it its own help). */
export const storeFlag = { name: 'store', arg: '<url>', help: storeOptionHelp } as const satisfies FlagSpec;
export const encryptionKeyFileFlag = { name: 'encryption-key-file', arg: '<file>', help: encryptionKeyFileHelp } as const satisfies FlagSpec;

/** --store, else TEAMKEYS_STORE when set and not empty, else the default. */
export function storeUrl(option: string | undefined): string {
  return option ?? (process.env.TEAMKEYS_STORE || defaultStoreUrl);
}

/**
 * Commands that read a target (plan, apply, import, watch) use the default store only when it is
 * there: with neither --server nor --store, a missing default would become a new, empty store,
 * and a plan against it would quietly show everything as new. The refusal, or undefined.
 */
export function missingDefaultStore(option: string | undefined): string | undefined {
  if (option !== undefined || process.env.TEAMKEYS_STORE) return undefined;
  const path = resolve(defaultStoreUrl.slice('sqlite:'.length));
  if (existsSync(path)) return undefined;
  return `no target: give --server URL (a running teamkeys serve, with --token-file) or --store URL (sqlite:PATH, made if missing, or postgres://...); the default store ${path} does not exist, and an empty one is not made for this command`;
}

/**
 * Commands that only read (access-review, keys) never make a store: `--store sqlite:TYPO` would
 * otherwise become a new, empty store, reviewed as an installation with no keys and no rights.
 * The refusal (naming the file), or undefined.
 */
export function missingReadStore(option: string | undefined, command: string): string | undefined {
  const url = storeUrl(option);
  if (!url.startsWith('sqlite:') || url.length === 'sqlite:'.length) return undefined;
  const path = resolve(url.slice('sqlite:'.length));
  if (existsSync(path)) return undefined;
  return `the store ${path} does not exist: ${command} only reads, and an empty store is not made for it (check --store or TEAMKEYS_STORE)`;
}

/** The file name of the default store inside the state directory. */
export const stateStoreFileName = 'teamkeys.db';

export const serveStoreHelp = `store URL: sqlite:PATH, postgres://USER@HOST:PORT/DB or memory: (default: $TEAMKEYS_STORE or sqlite:<state-dir>/${stateStoreFileName})`;

/**
 * The store `teamkeys serve` opens: --store, else TEAMKEYS_STORE when set and not empty, else
 * teamkeys.db in its state directory, so --state-dir moves everything the server keeps (two
 * servers started from one folder with different state directories have separate databases).
 */
export function serveStoreUrl(option: string | undefined, stateDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return option ?? (env.TEAMKEYS_STORE || `sqlite:${join(stateDir, stateStoreFileName)}`);
}

