/**
 * Runs background work (compaction, garbage collection, the sync daemon) only while this process
 * holds the lease, so replicas on one database never do it twice; another takes over within
 * about a second of the holder dying.
 */
import type { Logger } from 'pino';
import type { Lease } from '../store/lease.js';

export interface BackgroundWork {
  name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

export class Leader {
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private stopped = false;

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
    this.timer = setTimeout(() => void this.attempt(), this.retryMs);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    if (this.stopped || this.leading) return;
    if (!(await this.lease.tryAcquire())) return this.schedule();
    if (this.stopped) return;
    this.leading = true;
    this.log.info({ work: this.work.map((w) => w.name) }, 'acquired the background-work lease');
    for (const w of this.work) await w.start();
  }

  private async stepDown(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    for (const w of [...this.work].reverse()) await w.stop();
  }
}
