/**
 * The audit trail in the SQLite store's file: its own table, append-only. In-thread (the CLI's
 * embedded commands) it has its own connection; `teamkeys serve` runs the same statements in the
 * store's worker threads (sqlite-worker-audit-trail.ts) so no audit write waits on the event loop.
 */
import Database from 'better-sqlite3';
import { defaultAuditLimit, type AuditEvent, type AuditFilter } from '../../api/audit-event.js';
import { auditInsert, auditRow, auditSchema, whereOf, type AuditTrail } from './audit-trail.js';
import { switchToWal } from '../backends/sqlite-wal.js';

const schema = auditSchema('INTEGER PRIMARY KEY AUTOINCREMENT');

/** The trail's statements on a connection; `init` creates the table (a write) the first time. */
export function sqliteAuditStatements(db: Database.Database) {
  let insertAll: Database.Transaction<(events: AuditEvent[]) => void> | undefined;
  return {
    init(): void {
      db.exec(schema);
    },
    append(events: AuditEvent[]): void {
      if (!insertAll) {
        const insert = db.prepare<[string, string, string, string, string, string]>(auditInsert(() => '?'));
        insertAll = db.transaction((batch: AuditEvent[]) => {
          for (const e of batch) insert.run(...auditRow(e));
        });
      }
      insertAll.immediate(events);
    },
    list(f: AuditFilter): AuditEvent[] {
      const { sql, values } = whereOf(f, () => '?');
      const rows = db
        .prepare<unknown[], { event: string }>(`SELECT event FROM (SELECT id, event FROM audit_events ${sql} ORDER BY id DESC LIMIT ?) ORDER BY id`)
        .all(...values, f.limit ?? defaultAuditLimit);
      return rows.map((r) => JSON.parse(r.event) as AuditEvent);
    },
    /** Removes events stored before the ISO time; returns how many went. */
    trim(beforeIso: string): number {
      return db.prepare('DELETE FROM audit_events WHERE time < ?').run(beforeIso).changes;
    },
  };
}

export class SqliteAuditTrail implements AuditTrail {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<typeof sqliteAuditStatements>;

  constructor(path: string) {
    this.db = new Database(path);
    switchToWal(this.db, path, 5000);
    this.db.pragma('busy_timeout = 5000');
    // No fsync of its own: the WAL is one file, and the store's next write (synchronous=FULL)
    // makes these frames durable with its own; a second fsync per write would halve throughput.
    this.db.pragma('synchronous = NORMAL');
    this.statements = sqliteAuditStatements(this.db);
    this.statements.init();
  }

  async append(events: AuditEvent[]): Promise<void> {
    this.statements.append(events);
  }

  async list(f: AuditFilter): Promise<AuditEvent[]> {
    return this.statements.list(f);
  }

  async trim(before: Date): Promise<number> {
    return this.statements.trim(before.toISOString());
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
