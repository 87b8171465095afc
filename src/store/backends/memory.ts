/** The in-memory backend: the same log semantics as SQLite, for tests and throwaway servers. */
import { indexConflict, keyExists } from '../errors.js';
import type { LogBackend, Row } from '../log/log-backend.js';
import { LogStore } from '../log/log-store.js';
import type { EventType, LogRecord } from '../types.js';
import type { AuditEvent } from '../../api/audit-event.js';
import { MemoryAuditTrail, atRevision } from '../audit/audit-trail.js';
import { withoutProperty } from '../scrub.js';

interface MemRow {
  key: string;
  revision: number;
  value: string;
  type: EventType;
  prevRevision: number;
  /** The row's index values (none, one, or two distinct). */
  index?: readonly string[];
}

/** Index of the first element for which `before` is false, in a sorted array. */
function lowerBound<T>(items: T[], before: (item: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(items[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

class MemoryBackend implements LogBackend {
  private revision = 0;
  private compacted = 0;
  private log: MemRow[] = [];
  private readonly rows = new Map<string, MemRow[]>();
  private sortedKeys: string[] = [];
  /** Index value -> keys whose latest live row carries it. */
  private readonly byIndex = new Map<string, Set<string>>();

  constructor(private readonly trail: MemoryAuditTrail) {}

  latest(key: string): Row | undefined {
    const last = this.rows.get(key)?.at(-1);
    return last && last.type !== 'DELETED' ? last : undefined;
  }

  create(key: string, value: string, index: readonly string[], audit?: AuditEvent): number {
    const last = this.rows.get(key)?.at(-1);
    if (last && last.type !== 'DELETED') throw keyExists(key);
    return this.audited(this.append(key, value, 'ADDED', last?.revision ?? 0, index), audit);
  }

  update(key: string, value: string, expected: number, index: readonly string[], audit?: AuditEvent): number | undefined {
    const last = this.latest(key);
    if (!last || last.revision !== expected) return undefined;
    return this.audited(this.append(key, value, 'MODIFIED', expected, index), audit);
  }

  delete(key: string, expected: number, audit?: AuditEvent): number | undefined {
    const last = this.latest(key);
    if (!last || last.revision !== expected) return undefined;
    return this.audited(this.append(key, last.value, 'DELETED', expected, []), audit);
  }

  /** The write's audit event goes in with it (one synchronous step: nothing can come between). */
  private audited(revision: number, audit: AuditEvent | undefined): number {
    if (audit) this.trail.keep(atRevision(audit, revision));
    return revision;
  }

  rewriteHistory(key: string, property: string): void {
    const history = this.rows.get(key) ?? [];
    const keep = history.at(-1)?.type === 'DELETED' ? undefined : history.at(-1);
    for (const row of history) if (row !== keep) row.value = withoutProperty(row.value, property);
  }

  findByIndex(start: string, end: string, index: string): Row[] {
    const keys = [...(this.byIndex.get(index) ?? [])].filter((k) => k >= start && k < end).sort();
    return keys.map((k) => this.latest(k)!).filter(Boolean);
  }

  list(start: string, end: string, after: string, revision: number, limit: number, contains?: string): Row[] {
    const out: Row[] = [];
    const first =
      after >= start ? lowerBound(this.sortedKeys, (k) => k <= after) : lowerBound(this.sortedKeys, (k) => k < start);
    for (let i = first; i < this.sortedKeys.length; i++) {
      const key = this.sortedKeys[i]!;
      if (key >= end) break;
      const history = this.rows.get(key)!;
      const row = history[lowerBound(history, (r) => r.revision <= revision) - 1];
      if (row && row.type !== 'DELETED' && (contains === undefined || row.value.includes(contains))) out.push(row);
      if (limit > 0 && out.length >= limit) break;
    }
    return out;
  }

  readSince(after: number, limit: number): LogRecord[] {
    const start = lowerBound(this.log, (r) => r.revision <= after);
    return this.log.slice(start, start + limit).map((r) => {
      const record: LogRecord = { revision: r.revision, key: r.key, type: r.type, value: r.value };
      const prev = r.type === 'ADDED' ? undefined : this.rows.get(r.key)?.find((p) => p.revision === r.prevRevision);
      if (prev) {
        record.prevValue = prev.value;
        record.prevRevision = prev.revision;
      }
      return record;
    });
  }

  currentRevision(): number {
    return this.revision;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  compact(revision: number): void {
    if (revision <= this.compacted) return;
    const dropped = new Set<MemRow>();
    for (const [key, history] of this.rows) {
      const upTo = lowerBound(history, (r) => r.revision <= revision);
      // Rows superseded at or before the compaction revision, and a tombstone that is the last of them.
      const lastKept = history[upTo - 1];
      const cut = lastKept && lastKept.type === 'DELETED' ? upTo : upTo - 1;
      for (let i = 0; i < cut; i++) dropped.add(history[i]!);
      const kept = history.slice(Math.max(cut, 0));
      if (kept.length === 0) this.rows.delete(key);
      else this.rows.set(key, kept);
    }
    if (dropped.size > 0) {
      this.log = this.log.filter((r) => !dropped.has(r));
      this.sortedKeys = this.sortedKeys.filter((k) => this.rows.has(k));
    }
    this.compacted = revision;
  }

  ping(): void {}

  close(): void {}

  private append(key: string, value: string, type: EventType, prevRevision: number, index: readonly string[]): number {
    for (const v of index) if ([...(this.byIndex.get(v) ?? [])].some((k) => k !== key)) throw indexConflict(key);
    const row: MemRow = { key, revision: ++this.revision, value, type, prevRevision };
    if (index.length > 0) row.index = index;
    this.log.push(row);
    for (const v of this.rows.get(key)?.at(-1)?.index ?? []) {
      if (index.includes(v)) continue;
      this.byIndex.get(v)?.delete(key);
      if (this.byIndex.get(v)?.size === 0) this.byIndex.delete(v);
    }
    for (const v of index) {
      if (!this.byIndex.has(v)) this.byIndex.set(v, new Set());
      this.byIndex.get(v)!.add(key);
    }
    let history = this.rows.get(key);
    if (!history) {
      history = [];
      this.rows.set(key, history);
      this.sortedKeys.splice(lowerBound(this.sortedKeys, (k) => k < key), 0, key);
    }
    history.push(row);
    return row.revision;
  }
}

/** A Store that lives in this process's memory and is gone when it exits. */
export class MemoryStore extends LogStore {
  /** The audit trail its writes store their events in. */
  readonly auditTrail: MemoryAuditTrail;

  constructor() {
    const trail = new MemoryAuditTrail();
    super(new MemoryBackend(trail), { pollIntervalMs: 0 });
    this.auditTrail = trail;
  }
}
