/**
 * The SQLite log's tables (sqlite-backend.ts): created on a new file, and brought up to date on a
 * file written by an earlier version (columns and indexes added, the unique index values filled);
 * and the shape of the list statement, whose one lower bound keeps a page from walking every key.
 */
import type Database from 'better-sqlite3';
import { auditSchema } from '../audit/audit-trail.js';

const schema = `
CREATE TABLE IF NOT EXISTS kv (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  value TEXT NOT NULL,
  idx TEXT,
  idx2 TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS kv_name_prev_revision ON kv (name, prev_revision);
CREATE INDEX IF NOT EXISTS kv_name_id ON kv (name, id);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
`;
/** Live objects' index values, unique: two access keys can never share a value, however they race. */
const uniqueSchema = `
CREATE TABLE IF NOT EXISTS kv_unique (idx TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS kv_unique_name ON kv_unique (name);
`;
const backfillUnique = `INSERT OR IGNORE INTO kv_unique (idx, name)
  SELECT kv.idx, kv.name FROM kv WHERE kv.idx IS NOT NULL AND kv.deleted = 0
    AND kv.id = (SELECT MAX(k2.id) FROM kv k2 WHERE k2.name = kv.name)`;
const indexSchema = `
CREATE INDEX IF NOT EXISTS kv_idx ON kv (idx) WHERE idx IS NOT NULL;
CREATE INDEX IF NOT EXISTS kv_idx2 ON kv (idx2) WHERE idx2 IS NOT NULL;
`;

/**
 * The list statement with one lower bound on the name: `>=` the prefix, or `>` the key a page ended
 * at; `contains`: only rows whose value holds @text (tested before the correlated MAX, the costlier term).
 */
export const listSql = (lower: '>=' | '>', contains = false) => `SELECT kv.id, kv.name, kv.value FROM kv
  WHERE kv.name ${lower} @from AND kv.name < @end AND kv.id <= @rev AND kv.deleted = 0${contains ? ' AND instr(kv.value, @text) > 0' : ''}
    AND kv.id = (SELECT MAX(k2.id) FROM kv k2 WHERE k2.name = kv.name AND k2.id <= @rev)
  ORDER BY kv.name LIMIT @limit`;

export function createSchema(db: Database.Database): void {
  db.exec(schema);
  // Files written before the secondary index existed gain its column, and those written before
  // an object could carry a second index value (an access key's previous value) the second column.
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(kv)').all();
  if (!columns.some((c) => c.name === 'idx')) db.exec('ALTER TABLE kv ADD COLUMN idx TEXT');
  if (!columns.some((c) => c.name === 'idx2')) db.exec('ALTER TABLE kv ADD COLUMN idx2 TEXT');
  db.exec(indexSchema);
  const hadUnique = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'kv_unique'").get() !== undefined;
  db.exec(uniqueSchema);
  if (!hadUnique) db.exec(backfillUnique);
  // Each write stores its audit event in its own transaction: the table exists before any write.
  db.exec(auditSchema('INTEGER PRIMARY KEY AUTOINCREMENT'));
}
