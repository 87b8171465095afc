/**
 * Opens the store `teamkeys serve` serves (its URL: serveStoreUrl in store-flags.ts). A SQLite
 * file shared with a server that seals with another encryption key is refused
 * (store/backends/sqlite-sealing-key.ts).
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { FieldCipher } from '../api/field-cipher.js';
import { SqliteStore } from '../store/backends/sqlite.js';
import { claimSealingKey } from '../store/backends/sqlite-sealing-key.js';
import type { LogStore } from '../store/log/log-store.js';
import { openStore } from '../store/open.js';
import { cipherFor } from './embedded.js';
import { CliError } from './errors.js';
import { checkStoreRecord, recordStore } from './store-record.js';

/** The store (in worker threads) and the cipher of its sealed fields, checked to belong together. */
export async function openServeStore(
  url: string,
  keyFile: string,
  log: Logger,
  state: { stateDir: string; startEmpty: boolean },
): Promise<{ store: LogStore; cipher: FieldCipher }> {
  const sqlitePath = url.startsWith('sqlite:') ? resolve(url.slice('sqlite:'.length)) : undefined;
  if (sqlitePath) checkStoreRecord(state.stateDir, sqlitePath, state.startEmpty);
  const cipher = await cipherFor(url, keyFile);
  const store = openStore(url, { log, threads: true });
  if (!(store instanceof SqliteStore)) return { store, cipher };
  if (state.startEmpty && sqlitePath) log.warn({ path: store.path }, '--start-empty: serving the SQLite store as found, a new empty one if it was missing');
  recordStore(state.stateDir, store.path);
  const foreign = claimSealingKey(store.path, cipher.fingerprints());
  if (foreign) {
    await store.close();
    throw new CliError(
      `${store.path} is sealed with encryption key "${foreign.name}" (fingerprint ${foreign.fingerprint.slice(0, 12)}), which ${keyFile} does not hold: ` +
        'another server uses this store with other keys (a different --state-dir or --encryption-key-file?), and this one could not read what it seals. ' +
        'Give --encryption-key-file the key file of the servers sharing this store, or --store another file',
    );
  }
  // Read back from the live connection: the settings the power-loss promise rests on (docs/reliability.md).
  log.info(await store.durability(), 'SQLite store opened');
  return { store, cipher };
}
