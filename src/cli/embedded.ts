/** Opens the embedded store named by --store (or TEAMKEYS_STORE) and the registry over it. */
import { userInfo } from 'node:os';
import pino from 'pino';
import { createRegistry, type Registry } from '../registry/registry.js';
import { AuditRecorder } from '../server/audit/audit-recorder.js';
import { openAuditTrail } from '../store/audit/open.js';
import { defaultStoreUrl, openStore } from '../store/open.js';

export const storeOptionHelp = `store URL: sqlite:PATH, postgres://USER@HOST:PORT/DB or memory: (default: $TEAMKEYS_STORE or ${defaultStoreUrl})`;

export function storeUrl(option: string | undefined): string {
  return option ?? process.env.TEAMKEYS_STORE ?? defaultStoreUrl;
}

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

/** The registry over the store, recording its writes in the store's audit trail. */
export function openEmbedded(url: string | undefined, group?: string): Embedded {
  const store = openStore(storeUrl(url));
  // A failing audit append is reported on stderr, as the server logs it.
  const audit = new AuditRecorder(openAuditTrail(store), pino({ level: 'error' }, pino.destination(2)), { localUser: localUser() });
  const registry = createRegistry(store, { onWrite: audit.observer, ...(group ? { group } : {}) });
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
export async function withRegistry<T>(url: string | undefined, fn: (registry: Registry) => Promise<T>): Promise<T> {
  const embedded = openEmbedded(url);
  try {
    return await fn(embedded.registry);
  } finally {
    await embedded.close();
  }
}
