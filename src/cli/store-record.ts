/**
 * The state directory's record of the SQLite stores its server has kept. A store file that is
 * missing where the record says one was (removed, moved, a volume not mounted) is refused at
 * start rather than replaced by a new, empty store with a new administrator: that would hide every
 * acknowledged write. `--start-empty` says an empty store is what is wanted.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from './errors.js';

const recordFile = 'sqlite-stores.json';

interface StoreRecord {
  /** Absolute paths of the SQLite files this state directory's server has opened. */
  sqlite: string[];
}

function readRecord(stateDir: string): StoreRecord {
  const file = join(stateDir, recordFile);
  if (!existsSync(file)) return { sqlite: [] };
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<StoreRecord>;
    return { sqlite: Array.isArray(parsed.sqlite) ? parsed.sqlite.filter((p): p is string => typeof p === 'string') : [] };
  } catch (err) {
    throw new CliError(`${file}: cannot be read as the record of this state directory's stores: ${(err as Error).message}`);
  }
}

/** Refuses a missing SQLite file the state directory says existed, unless startEmpty. */
export function checkStoreRecord(stateDir: string, path: string, startEmpty: boolean): void {
  if (startEmpty || existsSync(path) || !readRecord(stateDir).sqlite.includes(path)) return;
  throw new CliError(
    `the SQLite store ${path} is missing, but ${join(stateDir, recordFile)} says this state directory's server kept its store there: ` +
      'it was removed or moved (or its volume is not mounted). Put the file back (with its -wal file, if any), ' +
      'or start with --start-empty to begin a new, empty store (every object and key of the old one is gone, and a new administrator key is made)',
  );
}

/** Notes that the server on this state directory keeps its store in this SQLite file. */
export function recordStore(stateDir: string, path: string): void {
  const record = readRecord(stateDir);
  if (record.sqlite.includes(path)) return;
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(stateDir, recordFile), `${JSON.stringify({ sqlite: [...record.sqlite, path] }, null, 2)}\n`, { mode: 0o600 });
}
