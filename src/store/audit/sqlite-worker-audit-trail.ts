/**
 * The SQLite audit trail of a store running in worker threads: appends and trims go through the
 * writer thread (committed with the writes around them), listing through the reader thread, so no
 * audit write holds the event loop while it waits for the file's write lock.
 */
import type { AuditEvent, AuditFilter } from '../../api/audit-event.js';
import type { ThreadedSqliteBackend } from '../backends/sqlite-threads.js';
import type { AuditTrail } from './audit-trail.js';

export class SqliteWorkerAuditTrail implements AuditTrail {
  private readonly ready: Promise<void>;

  constructor(private readonly backend: ThreadedSqliteBackend) {
    this.ready = backend.audit.init();
    // A failure is reported to the first caller that awaits it, not as an unhandled rejection.
    this.ready.catch(() => {});
  }

  async append(events: AuditEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.ready;
    await this.backend.audit.append(events);
  }

  async list(filter: AuditFilter): Promise<AuditEvent[]> {
    await this.ready;
    return this.backend.audit.list(filter);
  }

  async trim(before: Date): Promise<number> {
    await this.ready;
    return this.backend.audit.trim(before.toISOString());
  }

  /** The store closes the threads. */
  async close(): Promise<void> {}
}
