/** The audit trail in the PostgreSQL store's database: its own table on the store's pool. */
import type pg from 'pg';
import { defaultAuditLimit, type AuditEvent, type AuditFilter } from '../../api/audit-event.js';
import { auditRow, auditSchema, whereOf, type AuditTrail } from './audit-trail.js';

const schema = auditSchema('BIGSERIAL PRIMARY KEY');

export class PostgresAuditTrail implements AuditTrail {
  private ready: Promise<void> | undefined;

  constructor(private readonly pool: pg.Pool) {}

  /** Replicas may start together; CREATE ... IF NOT EXISTS can still race, so a failure retries once. */
  private init(): Promise<void> {
    this.ready ??= this.pool.query(schema).then(
      () => undefined,
      () => this.pool.query(schema).then(() => undefined),
    );
    return this.ready;
  }

  async append(events: AuditEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.init();
    // One multi-row INSERT: one round trip and one commit for the whole batch, in order.
    const values: string[] = [];
    const rows = events.map((e, i) => {
      values.push(...auditRow(e));
      return `(${[1, 2, 3, 4, 5, 6].map((k) => `$${i * 6 + k}`).join(', ')})`;
    });
    await this.pool.query(`INSERT INTO audit_events (time, resource, name, uid, username, event) VALUES ${rows.join(', ')}`, values);
  }

  async list(f: AuditFilter): Promise<AuditEvent[]> {
    await this.init();
    const { sql, values } = whereOf(f, (i) => `$${i}`);
    const { rows } = await this.pool.query<{ event: string }>(
      `SELECT event FROM (SELECT id, event FROM audit_events ${sql} ORDER BY id DESC LIMIT $${values.length + 1}) AS newest ORDER BY id`,
      [...values, f.limit ?? defaultAuditLimit],
    );
    return rows.map((r) => JSON.parse(r.event) as AuditEvent);
  }

  async trim(before: Date): Promise<number> {
    await this.init();
    return (await this.pool.query('DELETE FROM audit_events WHERE time < $1', [before.toISOString()])).rowCount ?? 0;
  }

  async close(): Promise<void> {}
}
