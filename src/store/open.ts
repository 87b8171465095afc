/** Opens a Store from a URL: `memory:` or `sqlite:PATH` (PostgreSQL joins later). */
import { resolve } from 'node:path';
import { MemoryStore } from './backends/memory.js';
import { SqliteStore } from './backends/sqlite.js';
import type { Store } from './types.js';

export const defaultStoreUrl = 'sqlite:.teamkeys/teamkeys.db';

export class StoreUrlError extends Error {}

export function openStore(url: string = defaultStoreUrl): Store {
  if (url === 'memory:' || url === 'memory') return new MemoryStore();
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (!path) throw new StoreUrlError(`store URL "${url}" names no file: use sqlite:PATH`);
    return new SqliteStore(resolve(path));
  }
  throw new StoreUrlError(`unsupported store URL "${url}": use memory: or sqlite:PATH`);
}
