/**
 * Runs background work (compaction, garbage collection, the sync daemon) only while this process
 * holds the lease, so replicas on one database never do it twice; another takes over within
 * about a second of the holder dying. A database out of reach is logged and tried again, with
 * backoff up to 5 s; the lease is taken again once the database is back.
 */
import type { Logger } from 'pino';
import type { Lease } from '../store/lease.js';

export interface BackgroundWork {
  name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

const maxRetryMs = 5_000;

export class Leader {
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private stopped = false;
  /** Failed attempts in a row (the database out of reach), for the backoff. */
  private failures = 0;

  constructor(
    private readonly lease: Lease,
    private readonly work: BackgroundWork[],
    private readonly log: Logger,
    private readonly retryMs = 1000,
  ) {
    lease.onLost(() => {
      this.log.warn('lost the background-work lease; stopping background work');
      void this.stepDown().then(() => this.schedule());
    });
  }

  get isLeader(): boolean {
    return this.leading;
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
    this.log.info({ work: this.work.map((w) => w.name) }, 'acquired the background-work lease');
    for (const w of this.work) {
      // Stopped (the server closing, e.g. its port taken) while earlier work was starting: the rest stays stopped.
      if (!this.leading) return;
      try {
        await w.start();
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

  private async stepDown(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    for (const w of [...this.work].reverse()) {
      try {
        await w.stop();
      } catch (err) {
        this.log.warn({ err, work: w.name }, 'background work failed to stop');
      }
    }
  }
}
