/**
 * The outbox: every notification to send is a record in the store (under /notifications/), so it
 * survives a restart and any replica that takes the lease over sends what the last one did not.
 * A record's name is a hash of its receiver and what it says (an event's key uid, kind and
 * occurrence; a digest's day), so the same event is stored once whoever notices it how often:
 * create refuses the second (KeyExists). States: pending (nextAttemptAt set) -> delivered
 * (deliveredAt) or given up (gaveUpAt, after maxAgeMs of failures). Records are only written by
 * the leader, fenced (leader.ts).
 */
import { createHash } from 'node:crypto';
import { isStorageError } from '../store/errors.js';
import type { Store } from '../store/types.js';
import type { Message } from './messages.js';

export const outboxPrefix = '/notifications/';

export interface OutboxRecord {
  metadata: { name: string; uid?: string; resourceVersion?: string };
  receiver: string;
  createdAt: string;
  message: Message;
  /** An event's source (key uid and occurrence), so a delivered record can go once its cause is gone. */
  source?: string;
  /** A digest's warnings (event, key uid, occurrence): a warning some kept digest covers is not sent again. */
  covers?: string[];
  attempts: number;
  nextAttemptAt?: string;
  lastError?: string;
  deliveredAt?: string;
  gaveUpAt?: string;
}

/** The delay before attempt n+1 after n failures: 30 s doubling, at most an hour. */
export function backoffMs(failures: number): number {
  return Math.min(3_600_000, 30_000 * 2 ** Math.max(0, failures - 1));
}

/** The record name of an event for a receiver; a digest's is readable (`digest-2026-11-28`). */
export const eventRecordName = (source: string) => `e-${createHash('sha256').update(source).digest('hex').slice(0, 40)}`;
export const digestRecordName = (day: string) => `digest-${day}`;

const keyOf = (receiver: string, name: string) => `${outboxPrefix}${receiver}/${name}`;

export class Outbox {
  constructor(private readonly store: Store) {}

  /** Every record, of every receiver. */
  async all(): Promise<OutboxRecord[]> {
    const out: OutboxRecord[] = [];
    let after: string | undefined;
    do {
      const page = await this.store.list<OutboxRecord>(outboxPrefix, { limit: 500, ...(after ? { after } : {}) });
      out.push(...page.items);
      after = page.continueAfter;
    } while (after);
    return out;
  }

  /** Stores the record unless one of its name exists: true when this call stored it. */
  async add(record: OutboxRecord): Promise<boolean> {
    try {
      await this.store.create(keyOf(record.receiver, record.metadata.name), record);
      return true;
    } catch (err) {
      if (isStorageError(err, 'KeyExists')) return false;
      throw err;
    }
  }

  /** Applies `change` to the stored record (unless it was removed meanwhile). */
  async update(record: OutboxRecord, change: (r: OutboxRecord) => OutboxRecord): Promise<void> {
    try {
      await this.store.guaranteedUpdate<OutboxRecord>(keyOf(record.receiver, record.metadata.name), undefined, (r) => change(r));
    } catch (err) {
      if (!isStorageError(err, 'NotFound')) throw err;
    }
  }

  async remove(record: OutboxRecord): Promise<void> {
    try {
      await this.store.delete(keyOf(record.receiver, record.metadata.name));
    } catch (err) {
      if (!isStorageError(err, 'NotFound')) throw err;
    }
  }
}
