/** Opens the embedded store named by --store (or TEAMKEYS_STORE) and the registry over it. */
import { createRegistry, type Registry } from '../registry/registry.js';
import { defaultStoreUrl, openStore } from '../store/open.js';

export const storeOptionHelp = `store URL: sqlite:PATH or memory: (default: $TEAMKEYS_STORE or ${defaultStoreUrl})`;

/** --store, else TEAMKEYS_STORE when set and not empty, else the default. */
export function storeUrl(option: string | undefined): string {
  return option ?? (process.env.TEAMKEYS_STORE || defaultStoreUrl);
}

/** Runs fn with a registry over the store, closing the store afterwards whatever happens. */
export async function withRegistry<T>(url: string | undefined, fn: (registry: Registry) => Promise<T>): Promise<T> {
  const store = openStore(storeUrl(url));
  try {
    return await fn(createRegistry(store));
  } finally {
    await store.close();
  }
}
