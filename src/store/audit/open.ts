/** The audit trail that goes with a store: in the same database, beside the object log. */
import { PostgresStore } from '../backends/postgres.js';
import { SqliteStore } from '../backends/sqlite.js';
import type { Store } from '../types.js';
import { MemoryAuditTrail, type AuditTrail } from './audit-trail.js';
import { PostgresAuditTrail } from './postgres-audit-trail.js';
import { SqliteAuditTrail } from './sqlite-audit-trail.js';
import { SqliteWorkerAuditTrail } from './sqlite-worker-audit-trail.js';

/** The trail for a store: SQLite and PostgreSQL keep it in their database, memory: in memory. */
export function openAuditTrail(store: Store): AuditTrail {
  if (store instanceof SqliteStore && store.threaded) return new SqliteWorkerAuditTrail(store.threaded);
  if (store instanceof SqliteStore && store.path !== ':memory:') return new SqliteAuditTrail(store.path);
  if (store instanceof PostgresStore) return new PostgresAuditTrail(store.pool);
  return new MemoryAuditTrail();
}
