/**
 * Runs background work (compaction, garbage collection, the sync daemon) only while this process
 * holds the lease, so replicas on one database never do it twice; another takes over within
 * about a second of the holder stopping, and within the lease's ttl of the holder pausing or
 * being cut off (lease.ts). The work runs fenced (store/fence.ts): its writes carry the lease's
 * token, and a write from a hold that is over is refused, logged and counted here. A database
 * out of reach is logged and tried again, with backoff up to 5 s; the lease is taken again once
 * the database is back.
 */
import type { Logger } from 'pino';
import type { StorageError } from '../store/errors.js';
import { runFenced, type Fence } from '../store/fence.js';
import type { Lease } from '../store/lease.js';

/** What the leader reports to /metrics (leader-metrics.ts). */
export interface LeaderEvents {
  leading(yes: boolean): void;
  renewed(): void;
  lost(): void;
  refused(): void;
}

/** The fence of work asked to run as leader on a replica that does not lead: every write refused before the store. */
const notLeading: Fence = { token: 0, valid: () => false, refused: () => {} };

const noEvents: LeaderEvents = { leading: () => {}, renewed: () => {}, lost: () => {}, refused: () => {} };

export interface BackgroundWork {
  name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

const maxRetryMs = 5_000;

export class Leader {
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  /** The fence of the current hold, when the lease has fencing tokens. */
  private current: Fence | undefined;
  private stopped = false;
  /** Failed attempts in a row (the database out of reach), for the backoff. */
  private failures = 0;

  constructor(
    private readonly lease: Lease,
    private readonly work: BackgroundWork[],
    private readonly log: Logger,
    private readonly retryMs = 1000,
    private readonly events: LeaderEvents = noEvents,
  ) {
    events.leading(false);
    lease.onRenewed(() => events.renewed());
    lease.onLost((reason) => {
      events.lost();
      this.log.warn({ reason }, 'lost the background-work lease; stopping background work');
      void this.stepDown().then(() => this.schedule());
    });
  }

  /** Leading, and the lease not overdue on this replica's clock (a paused process wakes up not leading). */
  get isLeader(): boolean {
    return this.leading && this.lease.valid();
  }

  start(): void {
    void this.attempt();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.stepDown();
    await this.lease.release();
  }

  private schedule(): void {
    if (this.stopped) return;
    const delay = this.failures === 0 ? this.retryMs : Math.min(maxRetryMs, this.retryMs * 2 ** (this.failures - 1));
    this.timer = setTimeout(() => void this.attempt(), delay);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    if (this.stopped || this.leading) return;
    try {
      if (!(await this.lease.tryAcquire())) {
        this.failures = 0;
        return this.schedule();
      }
    } catch (err) {
      this.failures++;
      this.log.warn({ err, failedAttempts: this.failures }, 'could not try the background-work lease; retrying');
      return this.schedule();
    }
    this.failures = 0;
    if (this.stopped) return;
    this.leading = true;
    this.events.leading(true);
    const fence = (this.current = this.fence());
    this.log.info({ work: this.work.map((w) => w.name), ...(fence ? { fencingToken: fence.token } : {}) }, 'acquired the background-work lease');
    for (const w of this.work) {
      // Stopped (the server closing, e.g. its port taken) while earlier work was starting: the rest stays stopped.
      if (!this.leading) return;
      try {
        await (fence ? runFenced(fence, () => w.start()) : w.start());
        // stepDown ran while this one started: it stopped the work before it was running.
        if (!this.leading) await w.stop();
      } catch (err) {
        // Work that cannot start (the database went away again) is retried with the lease.
        this.log.warn({ err, work: w.name }, 'background work could not start; giving the lease up and retrying');
        await this.stepDown();
        await this.lease.release().catch(() => {});
        this.failures++;
        return this.schedule();
      }
    }
  }

  /**
   * Runs fn (work on a timer of its own, as the key health sweep's disabling) with the fence of
   * the current hold: its store writes are refused once the hold is over, and at once when this
   * replica does not lead.
   */
  fenced<T>(fn: () => T): T {
    if (this.current) return runFenced(this.current, fn);
    return this.leading ? fn() : runFenced(notLeading, fn);
  }

  /** The fence of this hold: valid while the lease is held with the same token. */
  private fence(): Fence | undefined {
    const token = this.lease.token();
    if (token === undefined) return undefined;
    return {
      token,
      valid: () => this.lease.token() === token && this.lease.valid(),
      refused: (err: StorageError) => {
        this.events.refused();
        this.log.warn({ key: err.key, fencingToken: token, reason: err.message }, 'refused a background write: this replica no longer holds the background-work lease');
      },
    };
  }

  private async stepDown(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    this.current = undefined;
    this.events.leading(false);
    for (const w of [...this.work].reverse()) {
      try {
        await w.stop();
      } catch (err) {
        this.log.warn({ err, work: w.name }, 'background work failed to stop');
      }
    }
  }
}
