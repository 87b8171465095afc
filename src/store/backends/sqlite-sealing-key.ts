/**
 * Which encryption key seals a SQLite store's fields: the file records the encrypting key (its
 * name and fingerprint, never the key) of the last server that opened it. A server whose key file
 * does not hold that key would not open what the others sealed, and would seal with a key they
 * do not hold: it is refused at start instead of sharing the file silently (two servers started
 * with different state directories on one --store, say). Rotation stays possible: a key file with
 * the new key first and the old one after still holds the recorded key, and then records the new.
 */
import Database from 'better-sqlite3';

const schema = 'CREATE TABLE IF NOT EXISTS sealing_key (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL, fingerprint TEXT NOT NULL)';

export interface KeyFingerprint {
  name: string;
  fingerprint: string;
}

/**
 * Records `keys[0]` as the store's sealing key, unless the store names one `keys` does not hold:
 * then that recorded key is returned and nothing is changed.
 */
export function claimSealingKey(path: string, keys: KeyFingerprint[]): KeyFingerprint | undefined {
  const db = new Database(path);
  try {
    db.pragma('busy_timeout = 5000');
    db.exec(schema);
    return db
      .transaction(() => {
        const recorded = db.prepare<[], KeyFingerprint>('SELECT name, fingerprint FROM sealing_key WHERE id = 1').get();
        if (recorded && !keys.some((k) => k.fingerprint === recorded.fingerprint)) return recorded;
        db.prepare('INSERT INTO sealing_key (id, name, fingerprint) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name, fingerprint = excluded.fingerprint').run(keys[0]!.name, keys[0]!.fingerprint);
        return undefined;
      })
      .immediate();
  } finally {
    db.close();
  }
}
