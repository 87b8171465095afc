/** The help and defaults of --store and --encryption-key-file: apart from embedded.ts so a command's flags load no store. */
import { join } from 'node:path';
import { defaultStoreUrl } from '../store/url.js';
import { encryptionKeyFileName } from './encryption-key-file.js';

export const storeOptionHelp = `store URL: sqlite:PATH, postgres://USER@HOST:PORT/DB or memory: (default: $TEAMKEYS_STORE or ${defaultStoreUrl})`;

/** The key file every command uses unless told otherwise: the default state directory's. */
export const defaultEncryptionKeyFile = join('.teamkeys', encryptionKeyFileName);
export const encryptionKeyFileHelp = `key file that encrypts sealed fields at rest (default: $TEAMKEYS_ENCRYPTION_KEY_FILE or ${defaultEncryptionKeyFile}; made on first use)`;

/** --store, else TEAMKEYS_STORE when set and not empty, else the default. */
export function storeUrl(option: string | undefined): string {
  return option ?? (process.env.TEAMKEYS_STORE || defaultStoreUrl);
}
