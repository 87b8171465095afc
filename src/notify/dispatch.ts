/**
 * Sending what the outbox holds: every record due, oldest first, one attempt each; a failure
 * schedules the next attempt with backoff (or gives up past maxAgeMs), a success marks the record
 * delivered. A receiver that fails is not tried again in the same pass, and one that fails
 * failingAfter times in a row is itself reported (an error in the log, a gauge on /metrics).
 */
import type { Logger } from 'pino';
import type { Receiver } from './config.js';
import { eventOf } from './messages.js';
import type { NotificationMetrics } from './metrics.js';
import { backoffMs, type Outbox, type OutboxRecord } from './outbox.js';
import { deliver } from './send.js';

const dayMs = 86_400_000;

export class Dispatcher {
  /** Failed attempts in a row, per receiver (memory of this leader; a new one counts afresh). */
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly outbox: Outbox,
    private readonly receivers: Map<string, Receiver>,
    private readonly metrics: NotificationMetrics,
    private readonly log: Logger,
    private readonly opts: { maxAgeMs?: number; failingAfter?: number },
  ) {}

  /** Sends every record due, oldest first; a receiver that fails is not tried again in this pass. */
  async deliverDue(now: Date, stopped: () => boolean): Promise<void> {
    const due = (await this.outbox.all())
      .filter((r) => !r.deliveredAt && !r.gaveUpAt && this.receivers.has(r.receiver) && Date.parse(r.nextAttemptAt ?? r.createdAt) <= now.getTime())
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.metadata.name.localeCompare(b.metadata.name));
    const down = new Set<string>();
    for (const r of due) {
      if (down.has(r.receiver) || stopped()) continue;
      if (!(await this.attempt(this.receivers.get(r.receiver)!, r, now))) down.add(r.receiver);
    }
  }

  private async attempt(receiver: Receiver, r: OutboxRecord, now: Date): Promise<boolean> {
    const event = eventOf(r.message);
    try {
      await deliver(receiver, r);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      const attempts = r.attempts + 1;
      const giveUp = now.getTime() - Date.parse(r.createdAt) >= (this.opts.maxAgeMs ?? 3 * dayMs);
      await this.outbox.update(r, (cur) => ({ ...cur, attempts, lastError: error, ...(giveUp ? { gaveUpAt: now.toISOString(), nextAttemptAt: undefined } : { nextAttemptAt: new Date(now.getTime() + backoffMs(attempts)).toISOString() }) }));
      this.metrics.attempt(receiver.name, event, giveUp ? 'gave_up' : 'failed');
      if (giveUp) this.log.error({ receiver: receiver.name, event, notification: r.metadata.name, attempts }, `gave up a notification to ${receiver.name} after ${attempts} attempts: ${error}`);
      else this.log.warn({ receiver: receiver.name, event, notification: r.metadata.name, attempts }, `notification to ${receiver.name} failed (${error}); retrying in ${Math.round(backoffMs(attempts) / 1000)}s`);
      this.failed(receiver.name, error);
      return false;
    }
    await this.outbox.update(r, (cur) => ({ ...cur, attempts: cur.attempts + 1, deliveredAt: now.toISOString(), nextAttemptAt: undefined, lastError: undefined }));
    this.metrics.attempt(receiver.name, event, 'delivered');
    this.answered(receiver.name);
    return true;
  }

  /** Counts a failure in a row; the receiver itself is reported once it reaches failingAfter. */
  private failed(receiver: string, error: string): void {
    const n = (this.failures.get(receiver) ?? 0) + 1;
    this.failures.set(receiver, n);
    if (n === (this.opts.failingAfter ?? 5)) {
      this.metrics.failing(receiver, true);
      this.log.error({ receiver, failedAttempts: n }, `notification receiver ${receiver} keeps failing (${n} attempts in a row, last: ${error}): its notifications wait in the outbox`);
    }
  }

  private answered(receiver: string): void {
    const n = this.failures.get(receiver) ?? 0;
    this.failures.delete(receiver);
    this.metrics.failing(receiver, false);
    if (n >= (this.opts.failingAfter ?? 5)) this.log.info({ receiver }, `notification receiver ${receiver} answers again`);
  }
}
