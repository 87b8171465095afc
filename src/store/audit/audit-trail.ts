/**
 * Where audit events are kept: an append-only table beside the object log (never in it, so events
 * never reach a watch), one implementation per backend, trimmed by age.
 */
import type { AuditEvent, AuditFilter } from '../../api/audit-event.js';
import { defaultAuditLimit } from '../../api/audit-event.js';

export interface AuditTrail {
  /** Appends events in order, in one transaction where the backend has them. */
  append(events: AuditEvent[]): Promise<void>;
  /** Matching events, oldest first (the newest `limit` of them). */
  list(filter: AuditFilter): Promise<AuditEvent[]>;
  /** Removes events stored before `before`; returns how many went. */
  trim(before: Date): Promise<number>;
  close(): Promise<void>;
}

/** The audit table and its indexes, the same in every SQL backend but for the id column's type. */
export function auditSchema(idColumn: string): string {
  return `
CREATE TABLE IF NOT EXISTS audit_events (
  id ${idColumn},
  time TEXT NOT NULL,
  resource TEXT NOT NULL,
  name TEXT NOT NULL,
  uid TEXT NOT NULL,
  username TEXT NOT NULL,
  event TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_events_object ON audit_events (resource, name, id);
CREATE INDEX IF NOT EXISTS audit_events_time ON audit_events (time);
`;
}

/** The columns every backend indexes, from an event. */
export function columnsOf(e: AuditEvent) {
  return { time: e.stageTimestamp, resource: e.objectRef.resource, name: e.objectRef.name, uid: e.objectRef.uid ?? '', username: e.user.username };
}

/** The event as a write stores it: objectRef.resourceVersion is the write's own revision. */
export function atRevision(e: AuditEvent, revision: number): AuditEvent {
  return { ...e, objectRef: { ...e.objectRef, resourceVersion: String(revision) } };
}

/** The values of one audit_events row (time, resource, name, uid, username, event), in column order. */
export function auditRow(e: AuditEvent): [string, string, string, string, string, string] {
  const c = columnsOf(e);
  return [c.time, c.resource, c.name, c.uid, c.username, JSON.stringify(e)];
}

/** The insert of one event, the same in every SQL backend but for its placeholders. */
export function auditInsert(placeholder: (i: number) => string): string {
  return `INSERT INTO audit_events (time, resource, name, uid, username, event) VALUES (${[1, 2, 3, 4, 5, 6].map(placeholder).join(', ')})`;
}

/** One in-memory trail (the memory: store, and tests). */
export class MemoryAuditTrail implements AuditTrail {
  private events: AuditEvent[] = [];

  async append(events: AuditEvent[]): Promise<void> {
    for (const e of events) this.keep(e);
  }

  /** Keeps one event at once (the memory store's writes, in their own synchronous step). */
  keep(event: AuditEvent): void {
    this.events.push(structuredClone(event));
  }

  async list(f: AuditFilter): Promise<AuditEvent[]> {
    const hits = this.events.filter((e) => {
      const c = columnsOf(e);
      return (!f.resource || c.resource === f.resource) && (!f.name || c.name === f.name) && (!f.uid || c.uid === f.uid) && (!f.username || c.username === f.username) && (!f.since || c.time >= f.since);
    });
    return structuredClone(hits.slice(-(f.limit ?? defaultAuditLimit)));
  }

  async trim(before: Date): Promise<number> {
    const cut = before.toISOString();
    const n = this.events.length;
    this.events = this.events.filter((e) => e.stageTimestamp >= cut);
    return n - this.events.length;
  }

  async close(): Promise<void> {}
}

/** The WHERE clause and its values for a filter; `$n` or `?` placeholders by backend. */
export function whereOf(f: AuditFilter, placeholder: (i: number) => string): { sql: string; values: string[] } {
  const parts: string[] = [];
  const values: string[] = [];
  const add = (column: string, op: string, value: string | undefined) => {
    if (!value) return;
    values.push(value);
    parts.push(`${column} ${op} ${placeholder(values.length)}`);
  };
  add('resource', '=', f.resource);
  add('name', '=', f.name);
  add('uid', '=', f.uid);
  add('username', '=', f.username);
  add('time', '>=', f.since);
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', values };
}
