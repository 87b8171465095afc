/** Opens a Store from a URL: `memory:`, `sqlite:PATH` or `postgres://...`. */
import { resolve } from 'node:path';
import { MemoryStore } from './backends/memory.js';
import { PostgresStore } from './backends/postgres.js';
import { SqliteStore } from './backends/sqlite.js';
import type { LogStore } from './log-store.js';
import type { StoreLog } from './types.js';

export const defaultStoreUrl = 'sqlite:.teamkeys/teamkeys.db';

export class StoreUrlError extends Error {}

/** Opens the store a URL names; `log` hears of the store's own trouble (a PostgreSQL connection lost). */
export function openStore(url: string = defaultStoreUrl, opts: { log?: StoreLog } = {}): LogStore {
  if (url === 'memory:' || url === 'memory') return new MemoryStore();
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (!path) throw new StoreUrlError(`store URL "${url}" names no file: use sqlite:PATH`);
    return new SqliteStore(resolve(path));
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return new PostgresStore(url, opts.log ? { log: opts.log } : {});
  throw new StoreUrlError(`unsupported store URL "${url}": use memory:, sqlite:PATH or postgres://USER@HOST:PORT/DB`);
}
