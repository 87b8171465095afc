/** Opens the embedded store named by --store (or TEAMKEYS_STORE) and the registry over it. */
import { join } from 'node:path';
import { FieldCipher } from '../api/field-cipher.js';
import type { AccessKeyPolicy } from '../api/strategy/ownedaccesskey.js';
import { createRegistry, type Registry } from '../registry/registry.js';
import { defaultStoreUrl, openStore } from '../store/open.js';
import type { Store } from '../store/types.js';
import { encryptionKeyFileName, loadCipher } from './encryption-key-file.js';

export const storeOptionHelp = `store URL: sqlite:PATH or memory: (default: $TEAMKEYS_STORE or ${defaultStoreUrl})`;

/** The key file every command uses unless told otherwise: the default state directory's. */
export const defaultEncryptionKeyFile = join('.teamkeys', encryptionKeyFileName);
export const encryptionKeyFileHelp = `key file that encrypts sealed fields at rest (default: $TEAMKEYS_ENCRYPTION_KEY_FILE or ${defaultEncryptionKeyFile}; made on first use)`;

export function storeUrl(option: string | undefined): string {
  return option ?? process.env.TEAMKEYS_STORE ?? defaultStoreUrl;
}

export interface EmbeddedOptions {
  group?: string;
  keyPolicy?: AccessKeyPolicy;
  /** --encryption-key-file; a memory: store without one uses a key that lives in this process. */
  encryptionKeyFile?: string;
}

/** The store at `url` and a registry over it that seals secrets with the key file's keys. */
export async function openEmbedded(url: string, opts: EmbeddedOptions = {}): Promise<{ store: Store; registry: Registry }> {
  const memory = url === 'memory:' || url === 'memory';
  const keyFile = opts.encryptionKeyFile ?? process.env.TEAMKEYS_ENCRYPTION_KEY_FILE ?? (memory ? undefined : defaultEncryptionKeyFile);
  const cipher = keyFile ? await loadCipher(keyFile) : FieldCipher.ephemeral();
  const store = openStore(url);
  const registry = createRegistry(store, { cipher, ...(opts.group ? { group: opts.group } : {}), ...(opts.keyPolicy ? { keyPolicy: opts.keyPolicy } : {}) });
  return { store, registry };
}

/** Runs fn with a registry over the store, closing the store afterwards whatever happens. */
export async function withRegistry<T>(url: string | undefined, fn: (registry: Registry) => Promise<T>, encryptionKeyFile?: string): Promise<T> {
  const { store, registry } = await openEmbedded(storeUrl(url), encryptionKeyFile ? { encryptionKeyFile } : {});
  try {
    return await fn(registry);
  } finally {
    await store.close();
  }
}
