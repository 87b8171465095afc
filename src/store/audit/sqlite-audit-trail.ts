/** The audit trail in the SQLite store's file: its own table and connection, append-only. */
import Database from 'better-sqlite3';
import { defaultAuditLimit, type AuditEvent, type AuditFilter } from '../../api/audit-event.js';
import { auditSchema, columnsOf, whereOf, type AuditTrail } from './audit-trail.js';

const schema = auditSchema('INTEGER PRIMARY KEY AUTOINCREMENT');

export class SqliteAuditTrail implements AuditTrail {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[string, string, string, string, string, string]>;
  private readonly insertAll: Database.Transaction<(events: AuditEvent[]) => void>;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    // No fsync of its own: the WAL is one file, and the store's next write (synchronous=FULL)
    // makes these frames durable with its own; a second fsync per write would halve throughput.
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(schema);
    this.insert = this.db.prepare('INSERT INTO audit_events (time, resource, name, uid, username, event) VALUES (?, ?, ?, ?, ?, ?)');
    this.insertAll = this.db.transaction((events: AuditEvent[]) => {
      for (const e of events) {
        const c = columnsOf(e);
        this.insert.run(c.time, c.resource, c.name, c.uid, c.username, JSON.stringify(e));
      }
    });
  }

  async append(events: AuditEvent[]): Promise<void> {
    this.insertAll.immediate(events);
  }

  async list(f: AuditFilter): Promise<AuditEvent[]> {
    const { sql, values } = whereOf(f, () => '?');
    const rows = this.db
      .prepare<unknown[], { event: string }>(`SELECT event FROM (SELECT id, event FROM audit_events ${sql} ORDER BY id DESC LIMIT ?) ORDER BY id`)
      .all(...values, f.limit ?? defaultAuditLimit);
    return rows.map((r) => JSON.parse(r.event) as AuditEvent);
  }

  async trim(before: Date): Promise<number> {
    return this.db.prepare('DELETE FROM audit_events WHERE time < ?').run(before.toISOString()).changes;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
