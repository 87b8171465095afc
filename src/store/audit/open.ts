/** The audit trail that goes with a store: in the same database, beside the object log. */
import { PostgresStore } from '../backends/postgres.js';
import { SqliteStore } from '../backends/sqlite.js';
import { MemoryStore } from '../backends/memory.js';
import { CachedStore } from '../cache/cached-store.js';
import type { Store } from '../types.js';
import { MemoryAuditTrail, type AuditTrail } from './audit-trail.js';
import { PostgresAuditTrail } from './postgres-audit-trail.js';
import { SqliteAuditTrail } from './sqlite-audit-trail.js';
import { SqliteWorkerAuditTrail } from './sqlite-worker-audit-trail.js';

/**
 * The trail for a store: SQLite and PostgreSQL keep it in their database, memory: in memory, in
 * the store's own trail, since every write stores its event with it (behind the watch cache too).
 */
export function openAuditTrail(store: Store): AuditTrail {
  if (store instanceof CachedStore) return openAuditTrail(store.inner);
  if (store instanceof MemoryStore) return store.auditTrail;
  if (store instanceof SqliteStore && store.threaded) return new SqliteWorkerAuditTrail(store.threaded);
  if (store instanceof SqliteStore && store.path !== ':memory:') return new SqliteAuditTrail(store.path);
  if (store instanceof PostgresStore) return new PostgresAuditTrail(store.pool);
  return new MemoryAuditTrail();
}
