/** Opens the embedded store named by --store (or TEAMKEYS_STORE) and the registry over it. */
import { userInfo } from 'node:os';
import pino from 'pino';
import { FieldCipher } from '../api/field-cipher.js';
import { createRegistry, type Registry } from '../registry/registry.js';
import { AuditRecorder } from '../server/audit/audit-recorder.js';
import { openAuditTrail } from '../store/audit/open.js';
import { openStore } from '../store/open.js';
import { loadCipher } from './encryption-key-file.js';
import { defaultEncryptionKeyFile, storeUrl } from './store-flags.js';

export { defaultEncryptionKeyFile, encryptionKeyFileHelp, storeOptionHelp, storeUrl } from './store-flags.js';

/** Who writes to a local store: the operating-system user running this command. */
function localUser(): string {
  try {
    return `local:${userInfo().username}`;
  } catch {
    return 'local:unknown';
  }
}

export interface Embedded {
  registry: Registry;
  /** The store's audit trail: this command's writes go to it, as a server's would. */
  audit: AuditRecorder;
  close(): Promise<void>;
}

/**
 * The key file's cipher: --encryption-key-file, else $TEAMKEYS_ENCRYPTION_KEY_FILE, else the default
 * state directory's; a memory: store without one uses a key that lives only in this process.
 */
export async function cipherFor(url: string, encryptionKeyFile?: string): Promise<FieldCipher> {
  const memory = url === 'memory:' || url === 'memory';
  const keyFile = encryptionKeyFile ?? process.env.TEAMKEYS_ENCRYPTION_KEY_FILE ?? (memory ? undefined : defaultEncryptionKeyFile);
  return keyFile ? loadCipher(keyFile) : FieldCipher.ephemeral();
}

/** The registry over the store, sealing secrets with the key file's keys and recording its writes in the store's audit trail. */
export async function openEmbedded(url: string | undefined, opts: { group?: string; encryptionKeyFile?: string } = {}): Promise<Embedded> {
  const cipher = await cipherFor(storeUrl(url), opts.encryptionKeyFile);
  const store = openStore(storeUrl(url));
  // A failing audit append is reported on stderr, as the server logs it.
  const audit = new AuditRecorder(openAuditTrail(store), pino({ level: 'error' }, pino.destination(2)), { localUser: localUser() });
  const registry = createRegistry(store, { cipher, onWrite: audit.observer, ...(opts.group ? { group: opts.group } : {}) });
  return {
    registry,
    audit,
    close: async () => {
      await audit.close();
      await store.close();
    },
  };
}

/** Runs fn with a registry over the store, closing the store afterwards whatever happens. */
export async function withRegistry<T>(url: string | undefined, fn: (registry: Registry) => Promise<T>, encryptionKeyFile?: string): Promise<T> {
  const embedded = await openEmbedded(url, encryptionKeyFile ? { encryptionKeyFile } : {});
  try {
    return await fn(embedded.registry);
  } finally {
    await embedded.close();
  }
}
