/** Opens a Store from a URL: `memory:`, `sqlite:PATH` or `postgres://...`. */
import { resolve } from 'node:path';
import { MemoryStore } from './backends/memory.js';
import { PostgresStore } from './backends/postgres.js';
import { SqliteStore } from './backends/sqlite.js';
import type { LogStore } from './log/log-store.js';
import type { StoreLog } from './types.js';
import { defaultStoreUrl, StoreUrlError } from './url.js';

export { defaultStoreUrl, StoreUrlError } from './url.js';

/**
 * Opens the store a URL names; `log` hears of the store's own trouble (a PostgreSQL connection lost);
 * `threads` runs SQLite in worker threads with group commit (for a server, not a short CLI command).
 */
export function openStore(url: string = defaultStoreUrl, opts: { log?: StoreLog; threads?: boolean } = {}): LogStore {
  if (url === 'memory:' || url === 'memory') return new MemoryStore();
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (!path) throw new StoreUrlError(`store URL "${url}" names no file: use sqlite:PATH`);
    return new SqliteStore(resolve(path), { threads: opts.threads ?? false, ...(opts.log ? { log: opts.log } : {}) });
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return new PostgresStore(url, opts.log ? { log: opts.log } : {});
  throw new StoreUrlError(`unsupported store URL "${url}": use memory:, sqlite:PATH or postgres://USER@HOST:PORT/DB`);
}
